package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// The actions a fault can take on a matching request.
const (
	Action429   = "429"   // Too Many Requests, plain text and Retry-After, as priority and fairness answers
	Action500   = "500"   // an InternalError Status
	Action401   = "401"   // an Unauthorized Status, as for an expired or rotated token
	Action409   = "409"   // a Conflict Status, as the apiserver answers a write it could not apply
	ActionDrop  = "drop"  // the connection closed without an answer
	ActionReset = "reset" // the connection reset (TCP RST) without an answer
	ActionDelay = "delay" // held for `delay`, then forwarded
	ActionHang  = "hang"  // never answered: held until the client gives up
	ActionHold  = "hold"  // held until the fault is deleted, then forwarded (or until the client gives up)
)

var actions = map[string]bool{
	Action429: true, Action500: true, Action401: true, Action409: true, ActionDrop: true, ActionReset: true,
	ActionDelay: true, ActionHang: true, ActionHold: true,
}

// A Fault as the control endpoint takes and shows it.
type Fault struct {
	ID     int    `json:"id"`
	Method string `json:"method,omitempty"` // "" or "*": any method
	// A regular expression (RE2) that must match the whole request path (the query is not part
	// of it): "/api/v1/namespaces/ml/pods/[^/]+".
	Path   string `json:"path"`
	Action string `json:"action"`
	// The next Count matching requests; 0: every matching request.
	Count int `json:"count,omitempty"`
	// 429: the Retry-After header in seconds (default 1).
	RetryAfter *int `json:"retry_after,omitempty"`
	// delay: how long, as a Go duration ("2s", "1500ms").
	Delay string `json:"delay,omitempty"`
	// drop, reset, 500: forward the request to the apiserver first (it is applied there), then
	// throw its answer away and fail: what a client sees when a connection dies after the write.
	AfterUpstream bool `json:"after_upstream,omitempty"`
	// Read only: requests this fault has matched so far, and requests held right now.
	Hits int `json:"hits"`
	Held int `json:"held"`

	re      *regexp.Regexp
	delay   time.Duration
	release chan struct{} // hold: closed when the fault is deleted
}

// Match is what a request that matched a fault is to suffer.
type Match struct {
	ID            int
	Action        string
	RetryAfter    int
	Delay         time.Duration
	AfterUpstream bool
	Release       <-chan struct{}
	set           *FaultSet
}

// Done says a held request stopped waiting (hold, hang).
func (m *Match) Done() {
	m.set.mu.Lock()
	defer m.set.mu.Unlock()
	for _, f := range m.set.faults {
		if f.ID == m.ID && f.Held > 0 {
			f.Held--
		}
	}
}

// FaultSet holds the active faults; the first fault (in the order they were added) that matches a
// request and has matches left decides.
type FaultSet struct {
	mu     sync.Mutex
	nextID int
	faults []*Fault
}

// Add validates f and adds it; it returns the fault's id.
func (s *FaultSet) Add(f Fault) (int, error) {
	if f.Method == "*" {
		f.Method = ""
	}
	f.Method = strings.ToUpper(f.Method)
	if f.Path == "" {
		return 0, errors.New("fault: path (a regular expression over the whole path) is required")
	}
	re, err := regexp.Compile("^(?:" + f.Path + ")$")
	if err != nil {
		return 0, fmt.Errorf("fault: path %q: %v", f.Path, err)
	}
	f.re = re
	if !actions[f.Action] {
		return 0, fmt.Errorf("fault: action %q: want one of 429, 500, 401, 409, drop, reset, delay, hang, hold", f.Action)
	}
	if f.Count < 0 {
		return 0, fmt.Errorf("fault: count %d: want 0 (every request) or more", f.Count)
	}
	if f.RetryAfter != nil && f.Action != Action429 {
		return 0, errors.New("fault: retry_after is for action 429 only")
	}
	if f.RetryAfter != nil && *f.RetryAfter < 0 {
		return 0, fmt.Errorf("fault: retry_after %d: want 0 or more", *f.RetryAfter)
	}
	if f.Action == ActionDelay {
		d, err := time.ParseDuration(f.Delay)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("fault: delay %q: want a Go duration such as 2s", f.Delay)
		}
		f.delay = d
	} else if f.Delay != "" {
		return 0, errors.New("fault: delay is for action delay only")
	}
	if f.AfterUpstream && f.Action != ActionDrop && f.Action != ActionReset && f.Action != Action500 {
		return 0, errors.New("fault: after_upstream is for actions drop, reset and 500 only")
	}
	if f.Action == ActionHold {
		f.release = make(chan struct{})
	}
	f.Hits, f.Held = 0, 0
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	f.ID = s.nextID
	s.faults = append(s.faults, &f)
	return f.ID, nil
}

// AddJSON adds one fault (an object) or several (an array); all or none.
func (s *FaultSet) AddJSON(body []byte) ([]int, error) {
	var list []Fault
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "[") {
		if err := strictUnmarshal(body, &list); err != nil {
			return nil, err
		}
	} else {
		var one Fault
		if err := strictUnmarshal(body, &one); err != nil {
			return nil, err
		}
		list = []Fault{one}
	}
	// Validate all first: a bad fault in a list adds none.
	var probe FaultSet
	for _, f := range list {
		if _, err := probe.Add(f); err != nil {
			return nil, err
		}
	}
	ids := make([]int, 0, len(list))
	for _, f := range list {
		id, _ := s.Add(f)
		ids = append(ids, id)
	}
	return ids, nil
}

func strictUnmarshal(body []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("fault JSON: %v", err)
	}
	return nil
}

// Match finds the fault for a request and counts the hit; nil when none applies.
func (s *FaultSet) Match(method, path string) *Match {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.Method != "" && f.Method != method {
			continue
		}
		if f.Count > 0 && f.Hits >= f.Count {
			continue
		}
		if !f.re.MatchString(path) {
			continue
		}
		f.Hits++
		m := &Match{ID: f.ID, Action: f.Action, RetryAfter: 1, Delay: f.delay, AfterUpstream: f.AfterUpstream,
			Release: f.release, set: s}
		if f.RetryAfter != nil {
			m.RetryAfter = *f.RetryAfter
		}
		if f.Action == ActionHold || f.Action == ActionHang {
			f.Held++
		}
		return m
	}
	return nil
}

// Delete removes one fault (releasing the requests it holds); false when there is none by that id.
func (s *FaultSet) Delete(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if f.ID == id {
			if f.release != nil {
				close(f.release)
			}
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
			return true
		}
	}
	return false
}

// Clear removes every fault, releasing held requests.
func (s *FaultSet) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.release != nil {
			close(f.release)
		}
	}
	s.faults = nil
}

// List is a snapshot of the faults, by id.
func (s *FaultSet) List() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Fault, 0, len(s.faults))
	for _, f := range s.faults {
		c := *f
		c.re, c.release = nil, nil
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
