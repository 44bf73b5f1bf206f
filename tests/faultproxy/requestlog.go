package main

import (
	"encoding/json"
	"io"
	"strings"
	"sync"
)

// Entry is one line of the request log (JSON lines), written when the request is over.
type Entry struct {
	Seq       int64  `json:"seq"`     // arrival order, from 1
	Time      string `json:"time"`    // arrival, RFC 3339 UTC with nanoseconds
	UnixMS    int64  `json:"unix_ms"` // arrival, Unix milliseconds (for arithmetic in jq)
	Method    string `json:"method"`
	Path      string `json:"path"`
	Query     string `json:"query,omitempty"`
	Auth      string `json:"auth"` // "Bearer <redacted>", "<scheme> <redacted>" or "none": never the credential
	UserAgent string `json:"user_agent,omitempty"`
	// The status the client got; 0 when it got none (drop, reset, hang, or it gave up first).
	Status int `json:"status"`
	// The apiserver's status when the request was forwarded; 0 when it was not (or no answer came).
	UpstreamStatus int    `json:"upstream_status,omitempty"`
	Fault          string `json:"fault,omitempty"` // the action taken, "" for none
	FaultID        int    `json:"fault_id,omitempty"`
	DurationMS     int64  `json:"duration_ms"`
	Error          string `json:"error,omitempty"` // what went wrong forwarding, or "client gave up"
}

// RequestLog appends entries to a writer, one JSON object per line, each with a single Write.
type RequestLog struct {
	mu sync.Mutex
	w  io.Writer
}

func NewRequestLog(w io.Writer) *RequestLog { return &RequestLog{w: w} }

func (l *RequestLog) Write(e Entry) {
	line, err := json.Marshal(e)
	if err != nil {
		return
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(line)
}

// redactAuth names the kind of credential an Authorization header carries, never the credential.
func redactAuth(header string) string {
	header = strings.TrimSpace(header)
	if header == "" {
		return "none"
	}
	scheme, _, _ := strings.Cut(header, " ")
	if strings.EqualFold(scheme, "bearer") {
		return "Bearer <redacted>"
	}
	// Only the scheme's name, and only when it looks like one: never echo a bare credential.
	for _, c := range scheme {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') || len(scheme) > 16 {
			return "<redacted>"
		}
	}
	return scheme + " <redacted>"
}
