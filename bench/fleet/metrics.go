package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// cmdMetrics compares two scrapes of the API server's /metrics (before.txt after.txt): the
// requests it served in between by verb and resource (apiserver_request_total), and the
// admission webhooks' latency as it timed them (apiserver_admission_webhook_admission_duration_seconds,
// per webhook and operation), as Prometheus' histogram_quantile computes it from the bucket
// counts: linear within a bucket, so only as fine as the buckets (5 ms, 25 ms, 100 ms, 500 ms,
// 1 s, 2.5 s, ...: a p99 of "between 25 and 100 ms" is all they can say).
func cmdMetrics(args []string) {
	fs := flag.NewFlagSet("metrics", flag.ExitOnError)
	byCode := fs.Bool("codes", false, "requests by verb, resource and status code")
	fs.Parse(args)
	if fs.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: fleet metrics BEFORE AFTER (two scrapes of the API server's /metrics)")
		os.Exit(2)
	}
	before, err := scrape(fs.Arg(0))
	check(err)
	after, err := scrape(fs.Arg(1))
	check(err)
	delta := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			delta[k] = d
		}
	}
	requests := map[string]float64{}
	type hist struct {
		buckets map[float64]float64
		count   float64
	}
	hists := map[string]*hist{}
	for k, v := range delta {
		name, labels := splitSeries(k)
		switch name {
		case "apiserver_request_total":
			if labels["resource"] == "" {
				continue
			}
			r := labels["resource"]
			if labels["subresource"] != "" {
				r += "/" + labels["subresource"]
			}
			if *byCode {
				r += " " + labels["code"]
			}
			requests[labels["verb"]+" "+r] += v
		case "apiserver_admission_webhook_admission_duration_seconds_bucket", "apiserver_admission_webhook_admission_duration_seconds_count":
			key := labels["name"] + " " + labels["operation"]
			h := hists[key]
			if h == nil {
				h = &hist{buckets: map[float64]float64{}}
				hists[key] = h
			}
			if strings.HasSuffix(name, "_count") {
				h.count += v
				continue
			}
			le, err := strconv.ParseFloat(labels["le"], 64)
			if labels["le"] == "+Inf" {
				le, err = math.Inf(1), nil
			}
			if err == nil {
				h.buckets[le] += v // summed over type and rejected
			}
		}
	}
	webhooks := map[string]any{}
	for key, h := range hists {
		var les []float64
		for le := range h.buckets {
			les = append(les, le)
		}
		sort.Float64s(les)
		q := func(p float64) float64 {
			rank := p * h.count
			prevLe, prevCount := 0.0, 0.0
			for _, le := range les {
				c := h.buckets[le]
				if c >= rank {
					if math.IsInf(le, 1) {
						return prevLe * 1000 // the highest finite bound, as histogram_quantile answers
					}
					if c == prevCount {
						return le * 1000
					}
					return (prevLe + (le-prevLe)*(rank-prevCount)/(c-prevCount)) * 1000
				}
				prevLe, prevCount = le, c
			}
			return math.NaN()
		}
		var bounds []string
		for _, le := range les {
			bound := strconv.FormatFloat(le*1000, 'f', -1, 64) + "ms"
			if math.IsInf(le, 1) {
				bound = "+Inf"
			}
			bounds = append(bounds, bound+":"+strconv.FormatFloat(h.buckets[le], 'f', 0, 64))
		}
		webhooks[key] = map[string]any{"count": h.count, "p50_ms": round2(q(0.5)), "p99_ms": round2(q(0.99)),
			"buckets": strings.Join(bounds, " ")}
	}
	printJSON(map[string]any{"requests": requests, "webhooks": webhooks})
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// scrape reads Prometheus text: series (name{labels}) to value.
func scrape(file string) (map[string]float64, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total") && !strings.HasPrefix(line, "apiserver_admission_webhook_admission_duration_seconds") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] += v
	}
	return out, sc.Err()
}

// splitSeries: name{a="x",b="y"} to name and its labels (values without escapes, as these are).
func splitSeries(s string) (string, map[string]string) {
	labels := map[string]string{}
	i := strings.IndexByte(s, '{')
	if i < 0 {
		return s, labels
	}
	for _, kv := range strings.Split(strings.TrimSuffix(s[i+1:], "}"), `",`) {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			labels[k] = strings.Trim(v, `"`)
		}
	}
	return s[:i], labels
}
