package main

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"time"
)

// hook: the webhook as the API server calls it: HTTPS, keep-alive HTTP/1.1 connections,
// verifying the serving certificate for the Service's name while dialling the host process.
type hook struct {
	url    string
	client *http.Client
}

func newHook(addr, ca, serverName string, conns int) *hook {
	pool, err := caPool(ca)
	check(err)
	t := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serverName},
		MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	return &hook{url: "https://" + addr, client: &http.Client{Transport: t, Timeout: 15 * time.Second}}
}

func review(pod map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{"uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
			"kind":      map[string]any{"group": "", "version": "v1", "kind": "Pod"},
			"resource":  map[string]any{"group": "", "version": "v1", "resource": "pods"},
			"namespace": "ml", "operation": "CREATE", "name": pod["metadata"].(map[string]any)["name"],
			"userInfo": map[string]any{"username": "system:serviceaccount:kube-system:job-controller"},
			"object":   pod, "dryRun": false}})
	return b
}

// validate: POST /validate; allowed or not, or an error.
func (h *hook) validate(body []byte) (bool, error) {
	resp, err := h.client.Post(h.url+"/validate", "application/json", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, err
	}
	if resp.StatusCode != 200 {
		return false, fmt.Errorf("/validate: %d %s", resp.StatusCode, firstLine(out))
	}
	var r struct {
		Response struct {
			Allowed bool `json:"allowed"`
		} `json:"response"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return false, fmt.Errorf("/validate: %v", err)
	}
	return r.Response.Allowed, nil
}

func hookFlags(fs *flag.FlagSet) (addr, ca, name *string, conns *int) {
	addr = fs.String("addr", "", "host:port the webhook listens on")
	ca = fs.String("hook-ca", "", "the CA its serving certificate chains to")
	name = fs.String("server-name", "", "the name its certificate is verified for (the Service's DNS name)")
	conns = fs.Int("conns", 16, "keep-alive connections to the webhook")
	return
}

// cmdDirect: /validate for 8-GPU pods pinned to random nodes, at a fixed rate (open loop).
func cmdDirect(args []string) {
	var c common
	fs := flag.NewFlagSet("direct", flag.ExitOnError)
	c.register(fs)
	addr, ca, name, conns := hookFlags(fs)
	rate := fs.Float64("rate", 200, "requests per second")
	duration := fs.Duration("duration", 20*time.Second, "how long")
	fs.Parse(args)
	h := newHook(*addr, *ca, *name, *conns)
	rng := rand.New(rand.NewPCG(3, 4))
	n := int(*rate * duration.Seconds())
	bodies := make([][]byte, n)
	seen := map[string]bool{}
	for i := range bodies {
		node := c.nodeName(rng.IntN(c.nodes))
		seen[node] = true
		bodies[i] = review(gpuPod(fmt.Sprintf("direct-%06d", i), "ml", node, 8, false))
	}
	var mu sync.Mutex
	var lat, service []time.Duration
	allowed, denied, errs, firstErr := 0, 0, 0, ""
	elapsed := paced(n, *rate, *conns, func(i int, due time.Time) {
		t0 := time.Now()
		ok, err := h.validate(bodies[i])
		done := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if errs++; firstErr == "" {
				firstErr = err.Error()
			}
			return
		}
		if ok {
			allowed++
		} else {
			denied++
		}
		lat = append(lat, done.Sub(due))
		service = append(service, done.Sub(t0))
	})
	printJSON(map[string]any{"requests": n, "rate": *rate, "conns": *conns, "seconds": elapsed.Seconds(),
		"distinct_nodes": len(seen), "allowed": allowed, "denied": denied, "errors": errs, "first_error": firstErr,
		"validate_from_due": summarize(lat), "validate": summarize(service)})
	if errs > 0 {
		os.Exit(1)
	}
}
