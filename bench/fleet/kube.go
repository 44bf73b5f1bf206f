package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// kube is a bare Kubernetes API client: one HTTP/2 connection pool with the admin's client
// certificate (as client-go talks to the API server), and a count of the requests it made by verb
// and resource, so a run can say how many requests a node agent's sync costs.
type kube struct {
	base   string
	client *http.Client
	mu     sync.Mutex
	counts map[string]int
}

func newKube(server, ca, cert, key string) (*kube, error) {
	pool, err := caPool(ca)
	if err != nil {
		return nil, err
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("-cert/-key: %v", err)
	}
	t := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 256,
	}
	return &kube{base: strings.TrimRight(server, "/"), client: &http.Client{Transport: t, Timeout: 60 * time.Second},
		counts: map[string]int{}}, nil
}

func caPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("-ca: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("-ca %s: no PEM certificate", file)
	}
	return pool, nil
}

// resourceOf names a path's resource as apiserver_request_total does: "nodes", "nodes/status", "pods", "events".
func resourceOf(path string) string {
	p := strings.Split(strings.Trim(strings.SplitN(path, "?", 2)[0], "/"), "/")
	// /api/v1/nodes/N[/status], /api/v1/namespaces/NS/pods, /apis/G/V/namespaces/NS/events
	if p[0] == "apis" {
		p = p[3:]
	} else {
		p = p[2:]
	}
	if len(p) >= 2 && p[0] == "namespaces" {
		p = p[2:]
	}
	switch len(p) {
	case 0:
		return "?"
	case 3:
		return p[0] + "/" + p[2]
	default:
		return p[0]
	}
}

// call sends one request; body (if not nil) is JSON-encoded with content type ctype. The answer's
// status and body come back; a non-2xx status is not an error here (callers branch on 409 and 403).
func (k *kube) call(method, path, ctype string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, k.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	k.mu.Lock()
	k.counts[method+" "+resourceOf(path)]++
	k.mu.Unlock()
	resp, err := k.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// must: call, and an error unless the status is 2xx.
func (k *kube) must(method, path, ctype string, body any) ([]byte, error) {
	code, out, err := k.call(method, path, ctype, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", method, path, err)
	}
	if code/100 != 2 {
		return out, fmt.Errorf("%s %s: %d %s", method, path, code, firstLine(out))
	}
	return out, nil
}

func (k *kube) getJSON(path string) (map[string]any, error) {
	out, err := k.must("GET", path, "", nil)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(out, &m)
}

func (k *kube) snapshot() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]int{}
	for key, v := range k.counts {
		out[key] = v
	}
	return out
}

func firstLine(b []byte) string {
	s := string(b)
	if len(s) > 300 {
		s = s[:300]
	}
	return strings.SplitN(s, "\n", 2)[0]
}

const (
	mergePatch     = "application/merge-patch+json"
	strategicPatch = "application/strategic-merge-patch+json"
	jsonType       = "application/json"
)

// Field access on decoded JSON.
func obj(m map[string]any, key string) map[string]any {
	if v, ok := m[key].(map[string]any); ok {
		return v
	}
	return map[string]any{}
}

func arr(m map[string]any, key string) []any {
	if v, ok := m[key].([]any); ok {
		return v
	}
	return nil
}

func str(m map[string]any, key string) string {
	if v, ok := m[key].(string); ok {
		return v
	}
	return ""
}
