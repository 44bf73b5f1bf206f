package main

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// quantiles of durations in milliseconds: p50, p99, max (nearest rank), and the count.
type quantiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

func summarize(ds []time.Duration) quantiles {
	if len(ds) == 0 {
		return quantiles{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		i = max(0, min(i, len(s)-1))
		return ms(s[i])
	}
	return quantiles{N: len(s), P50: rank(0.50), P99: rank(0.99), Max: ms(s[len(s)-1])}
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())/10) / 100 }

// parallel runs fn(0..n-1) on `workers` goroutines.
func parallel(n, workers int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// paced runs fn(i, due) for i in 0..n-1, request i due at start + i/rate (open loop: a request
// is timed from when it was due, so a stall is charged to every request it delayed), on
// `workers` goroutines; a request waits for a free worker, never for the previous answer.
func paced(n int, rate float64, workers int, fn func(i int, due time.Time)) time.Duration {
	start := time.Now()
	jobs := make(chan int, n)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				fn(i, start.Add(time.Duration(float64(i)/rate*float64(time.Second))))
			}
		}()
	}
	for i := 0; i < n; i++ {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return time.Since(start)
}
