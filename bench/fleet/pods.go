package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"
)

// gpuPod: a training pod asking for `gpus` GPUs; pinned (spec.nodeName, or a nodeSelector on
// kubernetes.io/hostname, alternately) to `node` unless it is "".
func gpuPod(name, ns, node string, gpus int, bySelector bool) map[string]any {
	spec := map[string]any{
		"terminationGracePeriodSeconds": 0,
		"containers": []any{map[string]any{"name": "train", "image": "registry.example/pytorch:2.5",
			"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": fmt.Sprint(gpus)}}}},
		// kwok's nodes carry no taints of their own; a pod tolerates nothing it does not need.
	}
	if node != "" {
		if bySelector {
			spec["nodeSelector"] = map[string]any{"kubernetes.io/hostname": node}
		} else {
			spec["nodeName"] = node
		}
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"app": "train", "job-name": "fleet"}},
		"spec":     spec}
}

// cmdPods creates GPU pods through the API server at a fixed rate: a share of them pinned to
// random nodes (the webhook's /validate looks those up), the rest left to the scheduler (the
// webhook's /mutate adds the storage affinity). A refusal by validate.iogate.io of a pod pinned
// to a node below policy is the webhook doing its job; anything else that is not 201 is an error.
func cmdPods(args []string) {
	var c common
	fs := flag.NewFlagSet("pods", flag.ExitOnError)
	c.register(fs)
	n := fs.Int("n", 1000, "pods")
	rate := fs.Float64("rate", 200, "creates per second")
	ns := fs.String("namespace", "ml", "namespace (opted in to the webhook)")
	pinned := fs.Float64("pinned", 0.5, "share of pods pinned to a random node")
	fs.Parse(args)
	k := c.kube()
	rng := rand.New(rand.NewPCG(1, 2))
	type job struct {
		node  string
		gpus  int
		below bool
	}
	jobs := make([]job, *n)
	for i := range jobs {
		jobs[i].gpus = []int{1, 2, 4, 8}[rng.IntN(4)]
		if rng.Float64() < *pinned {
			jobs[i].node = c.nodeName(rng.IntN(c.nodes))
			jobs[i].below = profileOf(jobs[i].node, c.belowEvery).below
		}
	}
	var mu sync.Mutex
	var all, pinnedLat, unpinnedLat, fromDue []time.Duration
	created, refused, refusedUnexpected, errs := 0, 0, 0, 0
	firstErr, firstUnexpected := "", ""
	elapsed := paced(*n, *rate, c.workers, func(i int, due time.Time) {
		j := jobs[i]
		t0 := time.Now()
		code, body, err := k.call("POST", "/api/v1/namespaces/"+*ns+"/pods", jsonType,
			gpuPod(fmt.Sprintf("fleet-%05d", i), *ns, j.node, j.gpus, i%2 == 0))
		done := time.Now()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil || (code != 201 && code != 403):
			if errs++; firstErr == "" {
				firstErr = fmt.Sprintf("%d %v %s", code, err, firstLine(body))
			}
			return
		case code == 403:
			if !strings.Contains(string(body), `admission webhook \"validate.iogate.io\" denied`) {
				if errs++; firstErr == "" {
					firstErr = fmt.Sprintf("403 %s", firstLine(body))
				}
				return
			}
			refused++
			if !j.below {
				if refusedUnexpected++; firstUnexpected == "" {
					firstUnexpected = firstLine(body)
				}
			}
		default:
			created++
		}
		all = append(all, done.Sub(t0))
		fromDue = append(fromDue, done.Sub(due))
		if j.node != "" {
			pinnedLat = append(pinnedLat, done.Sub(t0))
		} else {
			unpinnedLat = append(unpinnedLat, done.Sub(t0))
		}
	})
	pinnedBelow := 0
	for _, j := range jobs {
		if j.below {
			pinnedBelow++
		}
	}
	printJSON(map[string]any{"pods": *n, "rate": *rate, "workers": c.workers, "seconds": elapsed.Seconds(),
		"achieved_per_s": float64(*n) / elapsed.Seconds(), "created": created, "refused": refused,
		"pinned_below_policy": pinnedBelow, "refused_unexpected": refusedUnexpected, "first_unexpected": firstUnexpected,
		"errors": errs, "first_error": firstErr,
		"create": summarize(all), "create_from_due": summarize(fromDue), "pinned": summarize(pinnedLat), "unpinned": summarize(unpinnedLat)})
	if errs > 0 {
		os.Exit(1)
	}
}
