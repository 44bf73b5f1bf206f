package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"time"
)

// cmdLag: how long the webhook goes on deciding on labels that are no longer true. M nodes that
// meet the policy are looked up once through /validate (an 8-GPU pod pinned to each: allowed, and
// now in whatever cache the webhook keeps), then each node's agent writes a probe that fell below
// policy (the same sync, with a cloud volume's IOPS: labels, taint, condition). From the moment
// the labels patch is answered, /validate for a pod pinned to that node is asked again and again
// until it denies; the lag is that first denial's time less the patch's answer. Every pending
// node is polled in turn at -poll-rate in all, so a node is asked again every pending/poll-rate
// seconds: "resolution" is the gap between a node's last allowed answer and its denial.
func cmdLag(args []string) {
	var c common
	fs := flag.NewFlagSet("lag", flag.ExitOnError)
	c.register(fs)
	addr, ca, name, conns := hookFlags(fs)
	m := fs.Int("n", 500, "nodes whose labels change")
	pollRate := fs.Float64("poll-rate", 200, "/validate polls per second, all pending nodes together")
	timeout := fs.Duration("timeout", 120*time.Second, "give up on a node this long after its change")
	tpl := fs.String("template", "", "what the real agent wrote (fleet.sh: template.json)")
	fs.Parse(args)
	t, err := loadTemplate(*tpl)
	check(err)
	k := c.kube()
	h := newHook(*addr, *ca, *name, *conns)

	var nodes []string
	for i := 0; i < c.nodes && len(nodes) < *m; i++ {
		if !profileOf(c.nodeName(i), c.belowEvery).below {
			nodes = append(nodes, c.nodeName(i))
		}
	}
	bodies := map[string][]byte{}
	for _, n := range nodes {
		bodies[n] = review(gpuPod("lag-"+n, "ml", n, 8, false))
	}
	// Warm: the decision as it stands, for every node (allowed: they meet the policy).
	var mu sync.Mutex
	warmDenied, warmErrs := 0, 0
	parallel(len(nodes), *conns, func(i int) {
		ok, err := h.validate(bodies[nodes[i]])
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			warmErrs++
		} else if !ok {
			warmDenied++
		}
	})

	type pending struct {
		node        string
		acked       time.Time
		lastAllowed time.Time
		polls       int
	}
	var queue []*pending
	var lags, gaps []time.Duration
	stale, pollErrs, writeErrs, timedOut, maxPolls := 0, 0, 0, 0, 0
	firstErr := ""
	done := make(chan struct{})
	var flipped sync.WaitGroup
	flipped.Add(1)
	writeStart := time.Now()
	var writeSeconds float64
	go func() { // the agents' writes
		defer flipped.Done()
		parallel(len(nodes), c.workers, func(i int) {
			acked, err := syncNode(k, t, nodes[i], belowProfile(nodes[i]))
			mu.Lock()
			defer mu.Unlock()
			if err != nil || acked.IsZero() {
				if writeErrs++; firstErr == "" {
					firstErr = fmt.Sprint("write ", nodes[i], ": ", err)
				}
				return
			}
			queue = append(queue, &pending{node: nodes[i], acked: acked})
		})
		writeSeconds = time.Since(writeStart).Seconds()
	}()
	tokens := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Duration(float64(time.Second) / *pollRate))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				select {
				case tokens <- struct{}{}:
				default:
				}
			}
		}
	}()
	var pollers sync.WaitGroup
	remaining := len(nodes)
	for w := 0; w < *conns; w++ {
		pollers.Add(1)
		go func() {
			defer pollers.Done()
			for {
				select {
				case <-done:
					return
				case <-tokens:
				}
				mu.Lock()
				if len(queue) == 0 {
					mu.Unlock()
					continue
				}
				p := queue[0]
				queue = queue[1:]
				mu.Unlock()
				ok, err := h.validate(bodies[p.node])
				now := time.Now()
				mu.Lock()
				p.polls++
				switch {
				case err == nil && !ok:
					lags = append(lags, now.Sub(p.acked))
					if !p.lastAllowed.IsZero() {
						gaps = append(gaps, now.Sub(p.lastAllowed))
					}
					maxPolls = max(maxPolls, p.polls)
					remaining--
				case now.Sub(p.acked) > *timeout:
					timedOut++
					remaining--
				case err != nil:
					if pollErrs++; firstErr == "" {
						firstErr = err.Error()
					}
					queue = append(queue, p)
				default:
					stale++
					p.lastAllowed = now
					queue = append(queue, p)
				}
				if remaining-writeErrs <= 0 {
					select {
					case <-done:
					default:
						close(done)
					}
				}
				mu.Unlock()
			}
		}()
	}
	flipped.Wait()
	mu.Lock()
	if remaining-writeErrs <= 0 {
		select {
		case <-done:
		default:
			close(done)
		}
	}
	mu.Unlock()
	pollers.Wait()
	printJSON(map[string]any{"nodes": len(nodes), "warm_denied": warmDenied, "warm_errors": warmErrs,
		"write_seconds": writeSeconds, "write_errors": writeErrs, "lag": summarize(lags), "resolution": summarize(gaps),
		"stale_answers": stale, "max_polls": maxPolls, "timed_out": timedOut, "poll_errors": pollErrs, "first_error": firstErr})
	if writeErrs > 0 || timedOut > 0 || warmDenied > 0 {
		os.Exit(1)
	}
}
