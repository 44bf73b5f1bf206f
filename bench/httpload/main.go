// httpload drives iogate's webhook the way the API server does: AdmissionReview POSTs over TLS on
// keep-alive connections, N clients at once, and reports latency percentiles as a markdown table.
// With -idle it first opens that many raw TCP connections that never send a byte (kept open,
// reopened when the server drops them) and measures the clients in their presence.
//
//	httpload -addr 127.0.0.1:8443 -ca ca.crt -validate v.json -mutate m.json \
//	         -clients 1,50,200 -duration 5s -idle 64 -rate 2000
//
// Each client sends its next request when the last is answered (closed loop: the server's
// throughput, and latencies that grow with the queue: clients / throughput by Little's law), or,
// in the rows marked with a rate, on a fixed schedule sharing that many requests per second
// between the clients (open loop: latency at a given load, counted from when the request was due,
// so a stall is not hidden by the requests it delayed).
//
// Standard library only; bench/webhook_load.sh builds and runs it.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type result struct {
	latencies []time.Duration
	errors    int
	firstErr  string
	elapsed   time.Duration
}

func main() {
	addr := flag.String("addr", "", "host:port of the webhook")
	caFile := flag.String("ca", "", "CA certificate (PEM) the server's certificate chains to")
	validate := flag.String("validate", "", "AdmissionReview body for /validate")
	mutate := flag.String("mutate", "", "AdmissionReview body for /mutate")
	clientsFlag := flag.String("clients", "1,50,200", "concurrent keep-alive clients, comma-separated")
	duration := flag.Duration("duration", 5*time.Second, "how long each measurement runs")
	idle := flag.Int("idle", 64, "raw idle TCP connections held open for the last measurements (0: none)")
	timeout := flag.Duration("timeout", 10*time.Second, "per-request timeout (the API server's default timeoutSeconds)")
	rate := flag.Float64("rate", 2000, "requests per second for the paced rows, shared by the most -clients (0: none)")
	flag.Parse()
	if *addr == "" || *caFile == "" || *validate == "" || *mutate == "" {
		flag.Usage()
		os.Exit(2)
	}
	pem, err := os.ReadFile(*caFile)
	check(err)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		check(fmt.Errorf("%s: no certificate", *caFile))
	}
	bodies := map[string][]byte{}
	for path, file := range map[string]string{"/validate": *validate, "/mutate": *mutate} {
		b, err := os.ReadFile(file)
		check(err)
		bodies[path] = b
	}
	var clients []int
	for _, s := range strings.Split(*clientsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		check(err)
		clients = append(clients, n)
	}
	tlsConfig := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}

	most := slices.Max(clients)

	fmt.Println("| idle conns | path | clients | connections, pace | req/s | p50 ms | p99 ms | max ms | errors |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	row := func(idleConns int, path string, n int, keepAlive bool, rate float64) {
		r := run(*addr, path, bodies[path], n, *duration, *timeout, tlsConfig, keepAlive, rate)
		p50, p99, max := percentile(r.latencies, 0.50), percentile(r.latencies, 0.99), percentile(r.latencies, 1)
		mode := "keep-alive"
		if !keepAlive {
			mode = "new per request"
		}
		if rate > 0 {
			mode += fmt.Sprintf(", %.0f/s", rate)
		} else {
			mode += ", closed loop"
		}
		errs := strconv.Itoa(r.errors)
		if r.errors > 0 {
			errs += " (" + r.firstErr + ")"
		}
		fmt.Printf("| %d | %s | %d | %s | %.0f | %s | %s | %s | %s |\n", idleConns, path, n, mode,
			float64(len(r.latencies))/r.elapsed.Seconds(), ms(p50), ms(p99), ms(max), errs)
	}
	for _, path := range []string{"/validate", "/mutate"} {
		for _, n := range clients {
			row(0, path, n, true, 0)
		}
		if *rate > 0 {
			row(0, path, most, true, *rate)
		}
	}
	if *idle > 0 {
		stop := holdIdle(*addr, *idle)
		time.Sleep(500 * time.Millisecond) // all of them accepted before the clients start
		for _, path := range []string{"/validate", "/mutate"} {
			row(*idle, path, 1, true, 0)
			row(*idle, path, 1, false, 0)
		}
		if *rate > 0 {
			row(*idle, "/validate", most, true, *rate)
		} else {
			row(*idle, "/validate", most, true, 0)
		}
		stop()
	}
}

// run: n clients POSTing body to path for d, on keep-alive connections or a new one per request,
// each as fast as answered (rate 0) or on a schedule of rate/n requests per second.
func run(addr, path string, body []byte, n int, d, timeout time.Duration, tlsConfig *tls.Config, keepAlive bool,
	rate float64) result {
	transport := &http.Transport{
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: n,
		MaxConnsPerHost:     n,
		DisableKeepAlives:   !keepAlive,
		ForceAttemptHTTP2:   false,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: timeout}
	url := "https://" + addr + path
	var mu sync.Mutex
	var all result
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	var interval time.Duration
	if rate > 0 {
		interval = time.Duration(float64(n) / rate * float64(time.Second))
	}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine result
			due := start
			if interval > 0 { // clients spread over one interval, not all at once
				due = start.Add(interval * time.Duration(i) / time.Duration(n))
			}
			for due.Before(deadline) && time.Now().Before(deadline) { // behind schedule: stop at the end all the same
				if interval > 0 {
					time.Sleep(time.Until(due))
				}
				t0 := time.Now()
				if interval > 0 {
					t0 = due // latency counted from when the request was due
					due = due.Add(interval)
				} else {
					due = time.Now()
				}
				err := post(client, url, body)
				if err != nil {
					mine.errors++
					if mine.firstErr == "" {
						mine.firstErr = err.Error()
					}
					continue
				}
				mine.latencies = append(mine.latencies, time.Since(t0))
			}
			mu.Lock()
			all.latencies = append(all.latencies, mine.latencies...)
			all.errors += mine.errors
			if all.firstErr == "" {
				all.firstErr = mine.firstErr
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	all.elapsed = time.Since(start)
	if len(all.firstErr) > 60 {
		all.firstErr = "…" + all.firstErr[len(all.firstErr)-60:]
	}
	return all
}

func post(client *http.Client, url string, body []byte) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	answer, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK || !bytes.Contains(answer, []byte(`"allowed"`)) {
		return fmt.Errorf("status %d", res.StatusCode)
	}
	return nil
}

// holdIdle keeps n raw TCP connections open that never send a byte, reopening any the server
// closes; the returned function closes them all.
func holdIdle(addr string, n int) func() {
	var stopped atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stopped.Load() {
				c, err := net.DialTimeout("tcp", addr, 5*time.Second)
				if err != nil {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				mu.Lock()
				if stopped.Load() {
					mu.Unlock()
					c.Close()
					return
				}
				open[c] = true
				mu.Unlock()
				io.Copy(io.Discard, c) // returns when the server closes it, or stop() does
				mu.Lock()
				delete(open, c)
				mu.Unlock()
				c.Close()
			}
		}()
	}
	return func() {
		mu.Lock()
		stopped.Store(true)
		for c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}
}

func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return -1
	}
	slices.Sort(sorted)
	i := int(q*float64(len(sorted))+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

func ms(d time.Duration) string {
	if d < 0 {
		return "–"
	}
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpload:", err)
		os.Exit(2)
	}
}
