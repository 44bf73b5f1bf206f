package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const secret = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.sig"

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) entries(t *testing.T) []Entry {
	t.Helper()
	var out []Entry
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

type fixture struct {
	faults   *FaultSet
	proxy    *Proxy
	server   *httptest.Server
	client   *http.Client
	log      *syncBuffer
	upstream atomic.Int64 // requests the upstream received
	lastAuth atomic.Value
	lastBody atomic.Value
}

// newFixture: an upstream that answers 200 with JSON, behind the proxy, both over TLS.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{faults: &FaultSet{}, log: &syncBuffer{}}
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.upstream.Add(1)
		f.lastAuth.Store(r.Header.Get("Authorization"))
		body, _ := io.ReadAll(r.Body)
		f.lastBody.Store(string(body))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"Pod","path":"`+r.URL.Path+`"}`)
	}))
	t.Cleanup(up.Close)
	upURL, _ := url.Parse(up.URL)
	transport := up.Client().Transport.(*http.Transport).Clone()
	f.proxy = NewProxy(upURL, transport, f.faults, NewRequestLog(f.log), log.New(io.Discard, "", 0))
	f.server = httptest.NewUnstartedServer(f.proxy)
	f.server.StartTLS()
	t.Cleanup(func() { f.proxy.Stop(); f.server.Close() })
	f.client = f.server.Client()
	f.client.Timeout = 20 * time.Second
	return f
}

func (f *fixture) add(t *testing.T, js string) int {
	t.Helper()
	ids, err := f.faults.AddJSON([]byte(js))
	if err != nil {
		t.Fatalf("AddJSON(%s): %v", js, err)
	}
	return ids[0]
}

func (f *fixture) do(t *testing.T, method, path, body string) (*http.Response, string, error) {
	t.Helper()
	req, _ := http.NewRequest(method, f.server.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b), nil
}

// waitEntries waits (bounded) until the log holds n entries, and returns them in arrival order
// (Seq): the log is written as requests end, so a dropped request's entry can follow the retry's.
func (f *fixture) waitEntries(t *testing.T, n int) []Entry {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if es := f.log.entries(t); len(es) >= n || time.Now().After(deadline) {
			if len(es) < n {
				t.Fatalf("want %d log entries, have %d: %s", n, len(es), f.log.String())
			}
			sort.Slice(es, func(i, j int) bool { return es[i].Seq < es[j].Seq })
			return es
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMatchMethodPathCountOrder(t *testing.T) {
	s := &FaultSet{}
	mustAdd := func(f Fault) int {
		id, err := s.Add(f)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a := mustAdd(Fault{Method: "patch", Path: "/api/v1/namespaces/ml/pods/[^/]+", Action: "429", Count: 2})
	b := mustAdd(Fault{Path: "/api/v1/namespaces/ml/pods/.*", Action: "500"})
	c := mustAdd(Fault{Method: "*", Path: ".*/events", Action: "drop", Count: 1})

	cases := []struct {
		method, path string
		want         int // fault id, 0 for none
	}{
		{"PATCH", "/api/v1/namespaces/ml/pods/p", a},        // first match wins
		{"GET", "/api/v1/namespaces/ml/pods/p", b},          // method differs: the next fault
		{"PATCH", "/api/v1/namespaces/ml/pods/p/status", b}, // [^/]+ does not cross a slash
		{"PATCH", "/api/v1/namespaces/ml/pods/p", a},        // a's second and last match
		{"PATCH", "/api/v1/namespaces/ml/pods/p", b},        // a spent
		{"POST", "/apis/events.k8s.io/v1/namespaces/ml/events", c},
		{"POST", "/apis/events.k8s.io/v1/namespaces/ml/events", 0}, // c spent
		{"GET", "/x/api/v1/namespaces/ml/pods/p", 0},               // the regex covers the whole path
		{"GET", "/api/v1/namespaces/ml/pods", 0},
	}
	for i, tc := range cases {
		m := s.Match(tc.method, tc.path)
		got := 0
		if m != nil {
			got = m.ID
		}
		if got != tc.want {
			t.Errorf("case %d: %s %s matched fault %d, want %d", i, tc.method, tc.path, got, tc.want)
		}
	}
	hits := map[int]int{}
	for _, f := range s.List() {
		hits[f.ID] = f.Hits
	}
	if hits[a] != 2 || hits[b] != 3 || hits[c] != 1 {
		t.Errorf("hits %v, want a=2 b=3 c=1", hits)
	}
	if !s.Delete(b) || s.Delete(b) {
		t.Error("Delete: want true once, then false")
	}
	if m := s.Match("GET", "/api/v1/namespaces/ml/pods/p"); m != nil {
		t.Errorf("after Delete: matched %d", m.ID)
	}
	s.Clear()
	if len(s.List()) != 0 {
		t.Error("Clear left faults")
	}
}

func TestAddRejects(t *testing.T) {
	bad := map[string]string{
		`{"path":"(","action":"500"}`:                               "path",
		`{"path":"/x","action":"503"}`:                              "action",
		`{"action":"500"}`:                                          "path",
		`{"path":"/x","action":"500","retry_after":3}`:              "retry_after",
		`{"path":"/x","action":"429","retry_after":-1}`:             "retry_after",
		`{"path":"/x","action":"delay","delay":"soon"}`:             "delay",
		`{"path":"/x","action":"hang","delay":"1s"}`:                "delay",
		`{"path":"/x","action":"429","after_upstream":true}`:        "after_upstream",
		`{"path":"/x","action":"500","count":-1}`:                   "count",
		`{"path":"/x","action":"500","cuont":1}`:                    "unknown field",
		`[{"path":"/x","action":"500"},{"path":"/y","action":"x"}]`: "action",
	}
	for js, want := range bad {
		s := &FaultSet{}
		_, err := s.AddJSON([]byte(js))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("AddJSON(%s): error %v, want one naming %q", js, err, want)
		}
		if len(s.List()) != 0 {
			t.Errorf("AddJSON(%s): added faults although it failed", js)
		}
	}
}

func TestPassThroughKeepsAuthorizationAndRedactsItInTheLog(t *testing.T) {
	f := newFixture(t)
	resp, body, err := f.do(t, "PATCH", "/api/v1/namespaces/ml/pods/p?fieldManager=x", `{"metadata":{}}`)
	if err != nil || resp.StatusCode != 200 || !strings.Contains(body, `"path":"/api/v1/namespaces/ml/pods/p"`) {
		t.Fatalf("pass-through: %v %v %s", err, resp, body)
	}
	if got := f.lastAuth.Load(); got != "Bearer "+secret {
		t.Errorf("upstream saw Authorization %q, want the client's unchanged", got)
	}
	if got := f.lastBody.Load(); got != `{"metadata":{}}` {
		t.Errorf("upstream saw body %q", got)
	}
	es := f.waitEntries(t, 1)
	e := es[0]
	if e.Method != "PATCH" || e.Path != "/api/v1/namespaces/ml/pods/p" || e.Query != "fieldManager=x" ||
		e.Status != 200 || e.UpstreamStatus != 200 || e.Fault != "" || e.Auth != "Bearer <redacted>" || e.Seq != 1 || e.UnixMS <= 0 {
		t.Errorf("log entry %+v", e)
	}
	if strings.Contains(f.log.String(), secret) || strings.Contains(f.log.String(), "c2VjcmV0") {
		t.Error("the token reached the log")
	}
}

func Test429WithRetryAfterThenPass(t *testing.T) {
	f := newFixture(t)
	f.add(t, `{"method":"PATCH","path":"/api/v1/namespaces/ml/pods/p","action":"429","count":2,"retry_after":3}`)
	for i := 0; i < 2; i++ {
		resp, body, err := f.do(t, "PATCH", "/api/v1/namespaces/ml/pods/p", "{}")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" ||
			body != "Too many requests, please try again later.\n" ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("attempt %d: %d Retry-After=%q %q %q", i, resp.StatusCode, resp.Header.Get("Retry-After"),
				resp.Header.Get("Content-Type"), body)
		}
	}
	resp, _, err := f.do(t, "PATCH", "/api/v1/namespaces/ml/pods/p", "{}")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("third: %v %v", err, resp)
	}
	if f.upstream.Load() != 1 {
		t.Errorf("upstream got %d requests, want 1 (the 429s are the proxy's)", f.upstream.Load())
	}
	es := f.waitEntries(t, 3)
	if es[0].Status != 429 || es[0].Fault != "429" || es[1].Status != 429 || es[2].Status != 200 || es[2].Fault != "" {
		t.Errorf("log: %s", f.log.String())
	}
}

func TestStatusFaults(t *testing.T) {
	for _, tc := range []struct {
		action, reason string
		code           int
	}{{"500", "InternalError", 500}, {"401", "Unauthorized", 401}, {"409", "Conflict", 409}} {
		f := newFixture(t)
		f.add(t, `{"method":"POST","path":".*/events","action":"`+tc.action+`","count":1}`)
		resp, body, err := f.do(t, "POST", "/apis/events.k8s.io/v1/namespaces/ml/events", "{}")
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Kind, APIVersion, Status, Reason, Message string
			Code                                      int
		}
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatalf("%s: body %q: %v", tc.action, body, err)
		}
		if resp.StatusCode != tc.code || resp.Header.Get("Content-Type") != "application/json" || st.Kind != "Status" ||
			st.APIVersion != "v1" || st.Status != "Failure" || st.Reason != tc.reason || st.Code != tc.code {
			t.Errorf("%s: %d %+v", tc.action, resp.StatusCode, st)
		}
		if f.upstream.Load() != 0 {
			t.Errorf("%s: forwarded", tc.action)
		}
		if resp, _, err := f.do(t, "POST", "/apis/events.k8s.io/v1/namespaces/ml/events", "{}"); err != nil || resp.StatusCode != 200 {
			t.Errorf("%s count 1: the next request was not forwarded: %v %v", tc.action, err, resp)
		}
	}
}

func TestDropAndReset(t *testing.T) {
	for _, action := range []string{"drop", "reset"} {
		f := newFixture(t)
		f.add(t, `{"method":"GET","path":"/api/v1/namespaces/ml/persistentvolumeclaims/c","action":"`+action+`","count":1}`)
		_, _, err := f.do(t, "GET", "/api/v1/namespaces/ml/persistentvolumeclaims/c", "")
		if err == nil {
			t.Fatalf("%s: the client got an answer", action)
		}
		var te interface{ Timeout() bool }
		if errors.As(err, &te) && te.Timeout() {
			t.Fatalf("%s: the client timed out instead of seeing the connection end: %v", action, err)
		}
		if f.upstream.Load() != 0 {
			t.Errorf("%s: forwarded", action)
		}
		resp, _, err := f.do(t, "GET", "/api/v1/namespaces/ml/persistentvolumeclaims/c", "")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: the retry: %v", action, err)
		}
		es := f.waitEntries(t, 2)
		if es[0].Status != 0 || es[0].Fault != action || es[1].Status != 200 {
			t.Errorf("%s: log %s", action, f.log.String())
		}
	}
}

func TestAfterUpstream(t *testing.T) {
	for _, action := range []string{"drop", "500"} {
		f := newFixture(t)
		f.add(t, `{"method":"POST","path":".*/events","action":"`+action+`","count":1,"after_upstream":true}`)
		resp, _, err := f.do(t, "POST", "/api/v1/namespaces/ml/events", `{"n":1}`)
		if action == "drop" && err == nil {
			t.Fatalf("drop after upstream: the client got %d", resp.StatusCode)
		}
		if action == "500" && (err != nil || resp.StatusCode != 500) {
			t.Fatalf("500 after upstream: %v %v", err, resp)
		}
		if f.upstream.Load() != 1 || f.lastBody.Load() != `{"n":1}` {
			t.Errorf("%s after upstream: upstream got %d requests (body %v), want the one", action, f.upstream.Load(), f.lastBody.Load())
		}
		es := f.waitEntries(t, 1)
		if es[0].UpstreamStatus != 200 || es[0].Fault != action {
			t.Errorf("%s after upstream: log %s", action, f.log.String())
		}
	}
}

func TestDelayForwardsAfterTheDelay(t *testing.T) {
	f := newFixture(t)
	f.add(t, `{"method":"PATCH","path":".*","action":"delay","delay":"300ms","count":1}`)
	start := time.Now()
	resp, _, err := f.do(t, "PATCH", "/api/v1/nodes/n", `{"a":1}`)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("delay: %v %v", err, resp)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("answered after %v, before the 300ms delay", d)
	}
	if f.lastBody.Load() != `{"a":1}` {
		t.Errorf("the held body reached the upstream as %v", f.lastBody.Load())
	}
}

func TestHangUntilTheClientGivesUp(t *testing.T) {
	f := newFixture(t)
	f.add(t, `{"path":".*","action":"hang"}`)
	client := f.server.Client()
	client.Timeout = 300 * time.Millisecond
	req, _ := http.NewRequest("PATCH", f.server.URL+"/api/v1/nodes/n", strings.NewReader(`{"a":1}`))
	_, err := client.Do(req)
	var te interface{ Timeout() bool }
	if err == nil || !errors.As(err, &te) || !te.Timeout() {
		t.Fatalf("hang: want the client's timeout, got %v", err)
	}
	es := f.waitEntries(t, 1) // written once the proxy saw the client go
	if es[0].Status != 0 || es[0].Fault != "hang" || es[0].Error != "client gave up" {
		t.Errorf("hang: log %s", f.log.String())
	}
	if f.upstream.Load() != 0 {
		t.Error("hang: forwarded")
	}
	if held := f.faults.List()[0].Held; held != 0 {
		t.Errorf("held %d after the client left", held)
	}
}

func TestHoldUntilDeleted(t *testing.T) {
	f := newFixture(t)
	id := f.add(t, `{"method":"GET","path":".*","action":"hold","count":1}`)
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, _, err := f.do(t, "GET", "/api/v1/namespaces/ml/pods/p", "")
		done <- result{resp, err}
	}()
	for deadline := time.Now().Add(10 * time.Second); f.faults.List()[0].Held != 1; {
		if time.Now().After(deadline) {
			t.Fatal("the request was not held")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case r := <-done:
		t.Fatalf("answered while held: %v %v", r.resp, r.err)
	default:
	}
	if f.upstream.Load() != 0 {
		t.Fatal("forwarded while held")
	}
	f.faults.Delete(id)
	r := <-done
	if r.err != nil || r.resp.StatusCode != 200 || f.upstream.Load() != 1 {
		t.Fatalf("released: %v %v", r.resp, r.err)
	}
}

func TestControlEndpoint(t *testing.T) {
	s := &FaultSet{}
	ctl := httptest.NewServer(controlHandler(s))
	defer ctl.Close()
	post := func(body string) (int, string) {
		resp, err := http.Post(ctl.URL+"/faults", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(`[{"path":"/a","action":"500"},{"method":"GET","path":"/b","action":"429","count":2}]`); code != 201 || body != "{\"ids\":[1,2]}\n" {
		t.Fatalf("POST: %d %s", code, body)
	}
	if code, body := post(`{"path":"/c","action":"nope"}`); code != 400 || !strings.Contains(body, "action") {
		t.Fatalf("bad POST: %d %s", code, body)
	}
	s.Match("GET", "/b")
	resp, _ := http.Get(ctl.URL + "/faults")
	var list []Fault
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list) != 2 || list[1].Hits != 1 || list[1].Count != 2 || list[0].Action != "500" {
		t.Fatalf("GET /faults: %+v", list)
	}
	del := func(path string) int {
		req, _ := http.NewRequest("DELETE", ctl.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if del("/faults/1") != 204 || del("/faults/1") != 404 || len(s.List()) != 1 {
		t.Fatal("DELETE /faults/1")
	}
	if del("/faults") != 204 || len(s.List()) != 0 {
		t.Fatal("DELETE /faults")
	}
}

func TestRedactAuth(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "none",
		"Bearer " + secret:    "Bearer <redacted>",
		"bearer " + secret:    "Bearer <redacted>",
		"Basic dXNlcjpwYXNz":  "Basic <redacted>",
		secret:                "<redacted>",
		"abcdefghijklmnopq x": "<redacted>",
	} {
		if got := redactAuth(in); got != want || strings.Contains(got, secret) {
			t.Errorf("redactAuth(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoopbackOnly(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:0": true, "[::1]:8443": true, "localhost:1": true,
		"0.0.0.0:0": false, ":8080": false, "10.0.0.1:443": false, "nohost": false,
	} {
		if err := loopbackOnly(addr); (err == nil) != ok {
			t.Errorf("loopbackOnly(%q) = %v", addr, err)
		}
	}
}

func TestConflictNamesTheObject(t *testing.T) {
	for path, want := range map[string][2]string{
		"/api/v1/namespaces/ml/pods/train-0":                {"pods", "train-0"},
		"/api/v1/nodes/gpu-1/status":                        {"nodes", "gpu-1"},
		"/api/v1/namespaces/ml/persistentvolumeclaims/data": {"persistentvolumeclaims", "data"},
	} {
		if r, n := objectOf(path); r != want[0] || n != want[1] {
			t.Errorf("objectOf(%q) = %q, %q; want %q, %q", path, r, n, want[0], want[1])
		}
	}
	f := newFixture(t)
	f.add(t, `{"method":"PATCH","path":"/api/v1/namespaces/ml/pods/train-0","action":"409","count":1}`)
	resp, body, err := f.do(t, "PATCH", "/api/v1/namespaces/ml/pods/train-0", "{}")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 409 || !strings.Contains(body, `Operation cannot be fulfilled on pods \"train-0\": the object has been modified`) {
		t.Errorf("409: %d %s", resp.StatusCode, body)
	}
}
