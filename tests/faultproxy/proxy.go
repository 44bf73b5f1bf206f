package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// maxHeldBody bounds what is buffered of a request body that is held (delay, hold, hang) before
// it is forwarded; the apiserver's own limit is 3 MiB.
const maxHeldBody = 32 << 20

// Proxy forwards requests to the apiserver unchanged (Authorization included, so the apiserver's
// authentication and RBAC decide) unless a fault matches, and logs every request.
type Proxy struct {
	faults   *FaultSet
	log      *RequestLog
	forward  *httputil.ReverseProxy
	shutdown chan struct{} // closed when the proxy stops: ends hangs and holds
	seq      atomic.Int64
}

// NewProxy makes a proxy to upstream with the given transport (TLS verified against the cluster
// CA, see upstreamTransport).
func NewProxy(upstream *url.URL, transport http.RoundTripper, faults *FaultSet, reqLog *RequestLog, errLog *log.Logger) *Proxy {
	p := &Proxy{faults: faults, log: reqLog, shutdown: make(chan struct{})}
	p.forward = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(upstream)
		},
		Transport:     transport,
		FlushInterval: -1, // watches and logs stream through
		ErrorLog:      errLog,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if rec, ok := w.(*recorder); ok {
				rec.err = err.Error()
			}
			if r.Context().Err() != nil {
				return // the client is gone: nothing to answer
			}
			errLog.Printf("forwarding %s %s: %v", r.Method, r.URL.Path, err)
			writeStatus(w, http.StatusBadGateway, "InternalError", "faultproxy: the apiserver did not answer: "+err.Error())
		},
	}
	return p
}

// Stop ends every hang and hold.
func (p *Proxy) Stop() {
	select {
	case <-p.shutdown:
	default:
		close(p.shutdown)
	}
}

// upstreamTransport: TLS to the apiserver verified against its CA only; no proxy from the
// environment (loopback only).
func upstreamTransport(caPEM []byte) (*http.Transport, error) {
	pool, err := certPool(caPEM)
	if err != nil {
		return nil, err
	}
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}, nil
}

// recorder remembers the status written through it; Unwrap lets http.ResponseController reach
// the connection (Hijack, Flush).
type recorder struct {
	http.ResponseWriter
	status int
	err    string
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// discard is where an answer that the client must not see goes (after_upstream).
type discard struct {
	header http.Header
	status int
}

func (d *discard) Header() http.Header { return d.header }
func (d *discard) WriteHeader(code int) {
	if d.status == 0 {
		d.status = code
	}
}
func (d *discard) Write(b []byte) (int, error) {
	if d.status == 0 {
		d.status = http.StatusOK
	}
	return len(b), nil
}
func (d *discard) Flush() {}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	e := Entry{
		Seq:       p.seq.Add(1),
		Time:      start.UTC().Format(time.RFC3339Nano),
		UnixMS:    start.UnixMilli(),
		Method:    r.Method,
		Path:      r.URL.Path,
		Query:     r.URL.RawQuery,
		Auth:      redactAuth(r.Header.Get("Authorization")),
		UserAgent: r.UserAgent(),
	}
	rec := &recorder{ResponseWriter: w}
	defer func() {
		e.Status = rec.status
		if e.Error == "" {
			e.Error = rec.err
		}
		e.DurationMS = time.Since(start).Milliseconds()
		p.log.Write(e)
	}()

	m := p.faults.Match(r.Method, r.URL.Path)
	if m == nil {
		p.pass(rec, r, &e)
		return
	}
	e.Fault, e.FaultID = m.Action, m.ID
	switch m.Action {
	case Action429:
		// What priority and fairness (and max-in-flight) send: http.Error's plain text, not a Status.
		rec.Header().Set("Retry-After", strconv.Itoa(m.RetryAfter))
		http.Error(rec, "Too many requests, please try again later.", http.StatusTooManyRequests)
	case Action401:
		writeStatus(rec, http.StatusUnauthorized, "Unauthorized", "Unauthorized")
	case Action409:
		resource, name := objectOf(r.URL.Path)
		writeStatus(rec, http.StatusConflict, "Conflict", fmt.Sprintf("Operation cannot be fulfilled on %s %q: "+
			"the object has been modified; please apply your changes to the latest version and try again", resource, name))
	case Action500:
		if m.AfterUpstream {
			e.UpstreamStatus = p.forwardDiscarding(r, &e)
		}
		writeStatus(rec, http.StatusInternalServerError, "InternalError",
			"Internal error occurred: injected by faultproxy")
	case ActionDrop, ActionReset:
		if m.AfterUpstream {
			e.UpstreamStatus = p.forwardDiscarding(r, &e)
		}
		if err := closeConnection(w, m.Action == ActionReset); err != nil {
			e.Error = err.Error()
		}
	case ActionDelay:
		if !p.buffer(r, &e) {
			return
		}
		t := time.NewTimer(m.Delay)
		defer t.Stop()
		select {
		case <-t.C:
			p.pass(rec, r, &e)
		case <-r.Context().Done():
			e.Error = "client gave up"
		case <-p.shutdown:
			e.Error = "proxy stopped"
			_ = closeConnection(w, false)
		}
	case ActionHold:
		defer m.Done()
		if !p.buffer(r, &e) {
			return
		}
		select {
		case <-m.Release:
			p.pass(rec, r, &e)
		case <-r.Context().Done():
			e.Error = "client gave up"
		case <-p.shutdown:
			e.Error = "proxy stopped"
			_ = closeConnection(w, false)
		}
	case ActionHang:
		defer m.Done()
		// The body is read first: Go's server notices a client that went away only once it is.
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxHeldBody))
		select {
		case <-r.Context().Done():
			e.Error = "client gave up"
		case <-p.shutdown:
			e.Error = "proxy stopped"
		}
		// Never an answer, not even the server's default empty 200.
		_ = closeConnection(w, false)
	}
}

// pass forwards the request and records the apiserver's status.
func (p *Proxy) pass(rec *recorder, r *http.Request, e *Entry) {
	p.forward.ServeHTTP(rec, r)
	if rec.err == "" {
		e.UpstreamStatus = rec.status
	}
}

// buffer reads the body into memory so a held request can still be forwarded and a client that
// gives up is noticed; false (and a 413) when the body is too large.
func (p *Proxy) buffer(r *http.Request, e *Entry) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxHeldBody+1))
	if err != nil {
		e.Error = "reading the body: " + err.Error()
		return false
	}
	if len(body) > maxHeldBody {
		e.Error = "body too large to hold"
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return true
}

// forwardDiscarding sends the request to the apiserver (so it takes effect) and throws the answer
// away; it returns the apiserver's status.
func (p *Proxy) forwardDiscarding(r *http.Request, e *Entry) int {
	d := &discard{header: http.Header{}}
	out := r.Clone(context.WithoutCancel(r.Context()))
	p.forward.ServeHTTP(d, out)
	return d.status
}

// closeConnection ends the client's connection without an answer: a close (FIN) or, with reset,
// a TCP RST. The TLS layer is bypassed, so no close_notify is sent either.
func closeConnection(w http.ResponseWriter, reset bool) error {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// HTTP/2 cannot hand over its connection; aborting the handler resets the stream.
		panic(http.ErrAbortHandler)
	}
	raw := conn
	if tc, ok := conn.(*tls.Conn); ok {
		raw = tc.NetConn()
	}
	if reset {
		if tcp, ok := raw.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0)
		}
	}
	return raw.Close()
}

// objectOf names the object of an API path as a Conflict Status does: the resource and the name
// ("pods", "train-0" of /api/v1/namespaces/ml/pods/train-0 and of .../pods/train-0/status).
func objectOf(path string) (resource, name string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if n := len(parts); n >= 3 && parts[n-1] == "status" {
		parts = parts[:n-1]
	}
	if n := len(parts); n >= 2 {
		return parts[n-2], parts[n-1]
	}
	return "objects", path
}

// writeStatus writes a metav1.Status failure as the apiserver does.
func writeStatus(w http.ResponseWriter, code int, reason, message string) {
	status := map[string]any{
		"kind":       "Status",
		"apiVersion": "v1",
		"metadata":   map[string]any{},
		"status":     "Failure",
		"message":    message,
		"reason":     reason,
		"code":       code,
	}
	if reason == "InternalError" {
		status["details"] = map[string]any{"causes": []map[string]string{{"message": message}}}
	}
	body, _ := json.Marshal(status)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
}

// loopbackOnly refuses a listen address that is not on loopback.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q: not a loopback address (127.0.0.1, ::1)", addr)
	}
	return nil
}

var errNoCert = errors.New("no PEM certificate")
