// Command write-loop is the Go baseline for API writes in the benchmark: it creates, replaces or
// deletes one ConfigMap per namespace with client-go, the way a Go controller would, so the
// product's write throughput can be compared with what the same API server takes from client-go.
//
// -owner-references gives every ConfigMap the same ownerReferences a copy carries, so that the
// API server and the garbage collector do the same work for both.
//
// It uses client-go's own transport (TLS, HTTP/2 unless DISABLE_HTTP2 is set; protobuf request
// and response bodies, which client-go's generated clients prefer for built-in kinds) with
// client-side rate limiting disabled (rest.Config.QPS < 0), N workers sharing one clientset. One
// request per object: create is a POST, update an unconditional PUT (no resourceVersion, which
// ConfigMaps allow), delete a DELETE. One request (GET /version) opens the connection before the
// clock starts. Write errors are counted, not fatal; flag errors exit 2. -content-type json sends
// and accepts JSON instead, as a client without protobuf does: what the encoding costs the server.
//
// -slow-start writes the objects in batches the way OpenKruise's ResourceDistribution controller
// does (its syncItSlowly): a batch of 1, then 2, 4, 8, ... each batch sent at once and waited for
// whole before the next, doubling up to -concurrency requests in flight (Kruise doubles without a
// cap; the cap keeps a 10,000-object run from sending 5,000 at once). Without it, -concurrency
// workers each take the next object as soon as their last request answers.
//
// -mode namespaces is the baseline for a new namespace's copies: at -rate namespaces per second,
// each namespace of the file is created (with the -label labels), and as soon as its create call
// answers, -configmaps ConfigMaps and -secrets Secrets (NAME-0, NAME-1, ...) are created in it at
// once, as a controller writing a new namespace's copies would. Each namespace's create call is
// timed (sent, answered) in "namespaces", so a caller watching the objects can time "namespace
// created -> its objects visible" on its own clock.
//
// Output, one JSON line on stdout:
//
//	{"mode":"create","objects":N,"errors":E,"firstError":"","wallMs":F,"requestsPerSecond":R,"connections":C,"cpuMs":U,"protocol":"HTTP/2.0"}
//
// requestsPerSecond counts successful writes only; connections counts TCP connections dialled,
// the warm-up included; cpuMs is the process's own CPU time (user + system); protocol is the HTTP
// version the API server answered the warm-up with (HTTP/2.0 unless DISABLE_HTTP2 is set).
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
	"syscall"
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
	// CPU time (user + system) this process spent, its warm-up included.
	CPUMs float64 `json:"cpuMs"`
	// The HTTP version of the warm-up's answer.
	Protocol string `json:"protocol"`
	// -mode namespaces: each namespace's create call, sent and answered (Unix ms).
	Namespaces []namespaceTiming `json:"namespaces,omitempty"`
}

type namespaceTiming struct {
	Name         string  `json:"name"`
	SentAtUnixMs float64 `json:"sentAtUnixMs"`
	AtUnixMs     float64 `json:"atUnixMs"`
}

func unixMs(t time.Time) float64 { return round(float64(t.UnixMicro())/1000, 3) }

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
	concurrency := flag.Int("concurrency", 16, "workers (with -slow-start: the largest batch)")
	slowStart := flag.Bool("slow-start", false, "write in batches of 1, 2, 4, ... up to -concurrency, each waited for whole (create, update, delete)")
	mode := flag.String("mode", "", "create | update | delete (required)")
	revision := flag.Int64("revision", 1, "written as data key \"revision\" (create, update)")
	payloadFile := flag.String("payload", "", "JSON object of data key -> value merged into the data (optional)")
	annotationsFile := flag.String("annotations", "", "JSON object of annotations (optional)")
	ownersFile := flag.String("owner-references", "", "JSON array of ownerReferences set on each ConfigMap (optional)")
	rate := flag.Float64("rate", 2, "-mode namespaces: namespaces created per second")
	configMapsPerNamespace := flag.Int("configmaps", 10, "-mode namespaces: ConfigMaps created in each namespace")
	secretsPerNamespace := flag.Int("secrets", 1, "-mode namespaces: Secrets created in each namespace")
	contentType := flag.String("content-type", "protobuf", "request and response bodies: protobuf (client-go's default for built-in kinds) or json")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: write-loop -kubeconfig PATH -namespaces FILE -name NAME -mode create|update|delete|namespaces [flags]")
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
	case *mode != "create" && *mode != "update" && *mode != "delete" && *mode != "namespaces":
		usageError("-mode must be create, update, delete or namespaces, got %q", *mode)
	case *rate <= 0:
		usageError("-rate must be above 0")
	case *concurrency < 1:
		usageError("-concurrency must be at least 1")
	case *contentType != "protobuf" && *contentType != "json":
		usageError("-content-type must be protobuf or json, got %q", *contentType)
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
	if *contentType == "json" {
		config.ContentType = "application/json"
		config.AcceptContentTypes = "application/json"
	}
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
		fmt.Fprintf(os.Stderr, "write-loop: %s, %s, %d objects\n", protocol.Load(), shape(*slowStart, *concurrency), len(namespaces))
	}
	usedProtocol, _ := protocol.Load().(string)

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

	if *mode == "namespaces" {
		copies := namespaceCopies{clientset: clientset, name: *name, labels: labels, annotations: annotations, owners: owners, data: data, configMaps: *configMapsPerNamespace, secrets: *secretsPerNamespace}
		emit(copies.run(namespaces, *rate, connections.Load))
		return
	}

	var (
		failures   atomic.Int64
		firstMu    sync.Mutex
		firstError error
	)
	writeOne := func(i int) {
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
	started := time.Now()
	if *slowStart {
		inBatches(len(namespaces), *concurrency, writeOne)
	} else {
		inWorkers(len(namespaces), *concurrency, writeOne)
	}
	wall := time.Since(started)

	out := result{
		Mode:    *mode,
		Objects: len(namespaces),
		Errors:  int(failures.Load()),
		WallMs:  round(float64(wall.Microseconds())/1000, 3),
		// When the clock started, so that a caller can time "first request -> all visible" on its own clock.
		StartedAtUnixMs: unixMs(started),
		Connections:     connections.Load(),
		Protocol:        usedProtocol,
	}
	if firstError != nil {
		out.FirstError = firstError.Error()
	}
	if seconds := wall.Seconds(); seconds > 0 {
		out.RequestsPerSecond = round(float64(out.Objects-out.Errors)/seconds, 1)
	}
	emit(out)
}

func shape(slowStart bool, concurrency int) string {
	if slowStart {
		return fmt.Sprintf("slow start to %d in flight", concurrency)
	}
	return fmt.Sprintf("%d workers", concurrency)
}

// inWorkers calls write(0..count-1) from `workers` goroutines, each taking the next index as soon
// as its last call returns.
func inWorkers(count, workers int, write func(int)) {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < count; i = int(next.Add(1) - 1) {
				write(i)
			}
		}()
	}
	wg.Wait()
}

// inBatches calls write(0..count-1) in batches of 1, 2, 4, ... (at most maxBatch): every call of a
// batch at once, the next batch once all of them have returned.
func inBatches(count, maxBatch int, write func(int)) {
	for done, batch := 0, 1; done < count; batch = min(2*batch, maxBatch) {
		size := min(batch, count-done)
		var wg sync.WaitGroup
		for i := done; i < done+size; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				write(i)
			}()
		}
		wg.Wait()
		done += size
	}
}

func emit(out result) {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err == nil {
		out.CPUMs = round(float64(usage.Utime.Nano()+usage.Stime.Nano())/1e6, 1)
	}
	line, err := json.Marshal(out)
	if err != nil {
		panic(errors.Join(errors.New("cannot encode result"), err))
	}
	fmt.Println(string(line))
}

// namespaceCopies is -mode namespaces: new namespaces, each given its objects as soon as it exists.
type namespaceCopies struct {
	clientset           *kubernetes.Clientset
	name                string
	labels, annotations map[string]string
	owners              []metav1.OwnerReference
	data                map[string]string
	configMaps, secrets int
}

// objects creates the namespace's ConfigMaps and Secrets at once; the first error, if any.
func (c namespaceCopies) objects(ctx context.Context, namespace string) error {
	errs := make(chan error, c.configMaps+c.secrets)
	meta := func(i int) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", c.name, i), Namespace: namespace, Labels: c.labels, Annotations: c.annotations, OwnerReferences: c.owners}
	}
	for i := range c.configMaps {
		go func() {
			_, err := c.clientset.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta(i), Data: c.data}, metav1.CreateOptions{})
			errs <- err
		}()
	}
	for i := range c.secrets {
		go func() {
			_, err := c.clientset.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{ObjectMeta: meta(c.configMaps + i), StringData: c.data}, metav1.CreateOptions{})
			errs <- err
		}()
	}
	var first error
	for range c.configMaps + c.secrets {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// run creates the namespaces at `rate` per second, each followed by its objects.
func (c namespaceCopies) run(namespaces []string, rate float64, connections func() int64) result {
	timings := make([]namespaceTiming, len(namespaces))
	var (
		failures   atomic.Int64
		firstMu    sync.Mutex
		firstError error
		wg         sync.WaitGroup
	)
	fail := func(namespace string, err error) {
		failures.Add(1)
		firstMu.Lock()
		defer firstMu.Unlock()
		if firstError == nil {
			firstError = fmt.Errorf("%s: %w", namespace, err)
		}
	}
	started := time.Now()
	for i, namespace := range namespaces {
		time.Sleep(time.Until(started.Add(time.Duration(float64(i) / rate * float64(time.Second)))))
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
			defer cancel()
			sent := time.Now()
			_, err := c.clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: c.labels}}, metav1.CreateOptions{})
			timings[i] = namespaceTiming{Name: namespace, SentAtUnixMs: unixMs(sent), AtUnixMs: unixMs(time.Now())}
			if err == nil {
				err = c.objects(ctx, namespace)
			}
			if err != nil {
				fail(namespace, err)
			}
		}()
	}
	wg.Wait()
	wall := time.Since(started)
	out := result{
		Mode:            "namespaces",
		Objects:         len(namespaces) * (1 + c.configMaps + c.secrets),
		Errors:          int(failures.Load()),
		WallMs:          round(float64(wall.Microseconds())/1000, 3),
		StartedAtUnixMs: unixMs(started),
		Connections:     connections(),
		Namespaces:      timings,
	}
	if firstError != nil {
		out.FirstError = firstError.Error()
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
