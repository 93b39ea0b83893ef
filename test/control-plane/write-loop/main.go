// Command write-loop is the Go baseline for API writes in the benchmark: it creates, replaces or
// deletes one ConfigMap per namespace with client-go, the way a Go controller would, so the
// product's write throughput can be compared with what the same API server takes from client-go.
//
// -owner-references gives every ConfigMap the same ownerReferences a copy carries, so that the
// API server and the garbage collector do the same work for both.
//
// It uses client-go's own transport (TLS, HTTP/2 unless DISABLE_HTTP2 is set, JSON bodies) with
// client-side rate limiting disabled (rest.Config.QPS < 0), N workers sharing one clientset. One
// request per object: create is a POST, update an unconditional PUT (no resourceVersion, which
// ConfigMaps allow), delete a DELETE. One request (GET /version) opens the connection before the
// clock starts. Write errors are counted, not fatal; flag errors exit 2.
//
// Output, one JSON line on stdout:
//
//	{"mode":"create","objects":N,"errors":E,"firstError":"","wallMs":F,"requestsPerSecond":R,"connections":C}
//
// requestsPerSecond counts successful writes only; connections counts TCP connections dialled,
// the warm-up included.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const requestTimeout = 60 * time.Second

type labelFlags map[string]string

func (l labelFlags) String() string {
	parts := make([]string, 0, len(l))
	for k, v := range l {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

func (l labelFlags) Set(value string) error {
	key, val, ok := strings.Cut(value, "=")
	if !ok || key == "" {
		return fmt.Errorf("want key=value, got %q", value)
	}
	l[key] = val
	return nil
}

type result struct {
	Mode              string  `json:"mode"`
	Objects           int     `json:"objects"`
	Errors            int     `json:"errors"`
	FirstError        string  `json:"firstError"`
	WallMs            float64 `json:"wallMs"`
	StartedAtUnixMs   float64 `json:"startedAtUnixMs"`
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	Connections       int64   `json:"connections"`
}

func usageError(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "write-loop: "+format+"\n", args...)
	flag.Usage()
	os.Exit(2)
}

func readLines(path string) ([]string, error) {
	content, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, line := range strings.Split(string(content), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	return lines, nil
}

func readStringMap(path string) (map[string]string, error) {
	result := map[string]string{}
	if path == "" {
		return result, nil
	}
	content, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(content, &result); err != nil {
		return nil, fmt.Errorf("%s: want a JSON object of strings: %w", path, err)
	}
	return result, nil
}

func round(value float64, decimals int) float64 {
	scale := math.Pow(10, float64(decimals))
	return math.Round(value*scale) / scale
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (required)")
	namespacesFile := flag.String("namespaces", "", "file with one namespace per line (required)")
	name := flag.String("name", "", "ConfigMap name (required)")
	labels := labelFlags{}
	flag.Var(labels, "label", "key=value label added to each ConfigMap (repeatable)")
	concurrency := flag.Int("concurrency", 16, "workers")
	mode := flag.String("mode", "", "create | update | delete (required)")
	revision := flag.Int64("revision", 1, "written as data key \"revision\" (create, update)")
	payloadFile := flag.String("payload", "", "JSON object of data key -> value merged into the data (optional)")
	annotationsFile := flag.String("annotations", "", "JSON object of annotations (optional)")
	ownersFile := flag.String("owner-references", "", "JSON array of ownerReferences set on each ConfigMap (optional)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: write-loop -kubeconfig PATH -namespaces FILE -name NAME -mode create|update|delete [flags]")
		flag.PrintDefaults()
	}
	flag.Parse()

	switch {
	case flag.NArg() > 0:
		usageError("unexpected arguments: %v", flag.Args())
	case *kubeconfig == "":
		usageError("-kubeconfig is required")
	case *namespacesFile == "":
		usageError("-namespaces is required")
	case *name == "":
		usageError("-name is required")
	case *mode != "create" && *mode != "update" && *mode != "delete":
		usageError("-mode must be create, update or delete, got %q", *mode)
	case *concurrency < 1:
		usageError("-concurrency must be at least 1")
	}
	namespaces, err := readLines(*namespacesFile)
	if err != nil {
		usageError("-namespaces: %v", err)
	}
	payload, err := readStringMap(*payloadFile)
	if err != nil {
		usageError("-payload: %v", err)
	}
	annotations, err := readStringMap(*annotationsFile)
	if err != nil {
		usageError("-annotations: %v", err)
	}

	var owners []metav1.OwnerReference
	if *ownersFile != "" {
		content, err := os.ReadFile(*ownersFile)
		if err == nil {
			err = json.Unmarshal(content, &owners)
		}
		if err != nil {
			usageError("-owner-references: %v", err)
		}
	}

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		usageError("-kubeconfig: %v", err)
	}
	// QPS < 0 disables client-go's token bucket (rest.Config.QPS, client-go v0.34).
	config.QPS = -1
	config.UserAgent = "resource-distributor-bench-write-loop"
	var connections atomic.Int64
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second} // client-go's own
	config.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		connections.Add(1)
		return dialer.DialContext(ctx, network, address)
	}
	var protocol atomic.Value
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err == nil {
				protocol.CompareAndSwap(nil, resp.Proto)
			}
			return resp, err
		})
	})
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		usageError("-kubeconfig: %v", err)
	}

	warmCtx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	_, warmErr := clientset.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(warmCtx)
	cancel()
	if warmErr != nil {
		fmt.Fprintf(os.Stderr, "write-loop: warm-up GET /version: %v\n", warmErr)
	} else {
		fmt.Fprintf(os.Stderr, "write-loop: %s, %d workers, %d objects\n", protocol.Load(), *concurrency, len(namespaces))
	}

	data := make(map[string]string, len(payload)+1)
	for k, v := range payload {
		data[k] = v
	}
	data["revision"] = strconv.FormatInt(*revision, 10)
	object := func(namespace string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: *name, Namespace: namespace, Labels: labels, Annotations: annotations, OwnerReferences: owners},
			Data:       data,
		}
	}
	write := func(ctx context.Context, namespace string) error {
		configMaps := clientset.CoreV1().ConfigMaps(namespace)
		var err error
		switch *mode {
		case "create":
			_, err = configMaps.Create(ctx, object(namespace), metav1.CreateOptions{})
		case "update":
			_, err = configMaps.Update(ctx, object(namespace), metav1.UpdateOptions{})
		case "delete":
			err = configMaps.Delete(ctx, *name, metav1.DeleteOptions{})
		}
		return err
	}

	var (
		next       atomic.Int64
		failures   atomic.Int64
		firstMu    sync.Mutex
		firstError error
		wg         sync.WaitGroup
	)
	started := time.Now()
	for range *concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(namespaces) {
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
				err := write(ctx, namespaces[i])
				cancel()
				if err != nil {
					failures.Add(1)
					firstMu.Lock()
					if firstError == nil {
						firstError = fmt.Errorf("%s: %w", namespaces[i], err)
					}
					firstMu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(started)

	out := result{
		Mode:    *mode,
		Objects: len(namespaces),
		Errors:  int(failures.Load()),
		WallMs:  round(float64(wall.Microseconds())/1000, 3),
		// When the clock started, so that a caller can time "first request -> all visible" on its own clock.
		StartedAtUnixMs: round(float64(started.UnixMicro())/1000, 3),
		Connections:     connections.Load(),
	}
	if firstError != nil {
		out.FirstError = firstError.Error()
	}
	if seconds := wall.Seconds(); seconds > 0 {
		out.RequestsPerSecond = round(float64(out.Objects-out.Errors)/seconds, 1)
	}
	line, err := json.Marshal(out)
	if err != nil {
		panic(errors.Join(errors.New("cannot encode result"), err))
	}
	fmt.Println(string(line))
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
