// Command admission-load is the benchmark's load generator for admission webhooks. It POSTs one
// body at a constant arrival rate, the way an API server calls a webhook as objects arrive: open
// loop, request i is due at start + i/rate whether or not earlier ones have been answered. Requests
// go over a fixed pool of keep-alive HTTP/1.1 connections over TLS (the API server's webhook client
// against a server without HTTP/2). A response time runs from the moment the request was handed to
// the pool, so when every connection is busy the wait for one is counted: a server that stalls is
// charged for every request it holds up (no coordinated omission).
//
// A warm-up at the same rate opens the connections and is not counted. Output, one JSON line:
//
//	{"requests":N,"errors":E,"timeouts":T,"non2xx":X,"statusCodes":{"200":N},"achievedRps":R,"samplesMs":[...],"firstError":""}
//
// samplesMs holds the response time of every 2xx response, in milliseconds. Flag errors exit 2.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

type result struct {
	Requests    int            `json:"requests"`
	Errors      int            `json:"errors"`
	Timeouts    int            `json:"timeouts"`
	Non2xx      int            `json:"non2xx"`
	StatusCodes map[string]int `json:"statusCodes"`
	AchievedRps float64        `json:"achievedRps"`
	SamplesMs   []float64      `json:"samplesMs"`
	FirstError  string         `json:"firstError"`
}

type outcome struct {
	status int
	ms     float64
	err    error
}

func usageError(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "admission-load: "+format+"\n", args...)
	flag.Usage()
	os.Exit(2)
}

func newClient(caFile string, connections int, timeout time.Duration) (*http.Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate", caFile)
	}
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		MaxConnsPerHost:     connections,
		MaxIdleConnsPerHost: connections,
		MaxIdleConns:        connections,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
		// A non-nil empty map turns HTTP/2 off: the server speaks HTTP/1.1.
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	return &http.Client{Transport: transport, Timeout: timeout}, nil
}

func post(client *http.Client, url string, body []byte, sent time.Time) outcome {
	response, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return outcome{err: err}
	}
	_, err = io.Copy(io.Discard, response.Body)
	response.Body.Close()
	if err != nil {
		return outcome{err: err}
	}
	return outcome{status: response.StatusCode, ms: float64(time.Since(sent).Nanoseconds()) / 1e6}
}

// attack sends rate requests per second for duration and returns every outcome, in no order.
func attack(client *http.Client, url string, body []byte, rate int, connections int, duration time.Duration) ([]outcome, time.Duration) {
	total := int(float64(rate) * duration.Seconds())
	due := make(chan time.Time, total)
	outcomes := make(chan outcome, total)
	var workers sync.WaitGroup
	for range connections {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for sent := range due {
				outcomes <- post(client, url, body, sent)
			}
		}()
	}
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	for i := range total {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		// Stamped when handed over, not when due: the sleep's own lateness is the generator's, not the server's.
		due <- time.Now()
	}
	close(due)
	workers.Wait()
	elapsed := time.Since(start)
	close(outcomes)
	all := make([]outcome, 0, total)
	for o := range outcomes {
		all = append(all, o)
	}
	return all, elapsed
}

func isTimeout(err error) bool {
	var timeout interface{ Timeout() bool }
	return errors.As(err, &timeout) && timeout.Timeout()
}

func main() {
	url := flag.String("url", "", "https URL to POST to (required)")
	bodyFile := flag.String("body", "", "file with the request body (required)")
	caFile := flag.String("ca", "", "PEM file of the CA that signed the server's certificate (required)")
	rate := flag.Int("rate", 0, "requests per second (required)")
	connections := flag.Int("connections", 16, "keep-alive connections at most")
	duration := flag.Duration("duration", 10*time.Second, "measured time")
	warmup := flag.Duration("warmup", 2*time.Second, "time at the same rate before measuring, not counted")
	timeout := flag.Duration("timeout", 10*time.Second, "per request")
	flag.Parse()
	switch {
	case flag.NArg() > 0:
		usageError("unexpected arguments: %v", flag.Args())
	case *url == "" || *bodyFile == "" || *caFile == "":
		usageError("-url, -body and -ca are required")
	case *rate < 1 || *connections < 1 || *duration <= 0:
		usageError("-rate, -connections and -duration must be positive")
	}
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		usageError("-body: %v", err)
	}
	client, err := newClient(*caFile, *connections, *timeout)
	if err != nil {
		usageError("-ca: %v", err)
	}
	if *warmup > 0 {
		attack(client, *url, body, *rate, *connections, *warmup)
	}
	outcomes, elapsed := attack(client, *url, body, *rate, *connections, *duration)
	out := result{StatusCodes: map[string]int{}, SamplesMs: make([]float64, 0, len(outcomes))}
	for _, o := range outcomes {
		out.Requests++
		switch {
		case o.err != nil && isTimeout(o.err):
			out.Timeouts++
		case o.err != nil:
			out.Errors++
			if out.FirstError == "" {
				out.FirstError = o.err.Error()
			}
		default:
			out.StatusCodes[strconv.Itoa(o.status)]++
			if o.status >= 200 && o.status < 300 {
				out.SamplesMs = append(out.SamplesMs, o.ms)
			} else {
				out.Non2xx++
			}
		}
	}
	out.AchievedRps = float64(len(out.SamplesMs)) / elapsed.Seconds()
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "admission-load: %v\n", err)
		os.Exit(1)
	}
}
