package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"time"
)

// cmdNodes creates the Node objects kwok takes over (its annotation), as a kubelet registers a
// GPU node: 8 nvidia.com/gpu in capacity and allocatable. The TaintNodesByCondition admission
// plugin taints every new Node not-ready; the node lifecycle controller, which would lift it once
// kwok reports Ready, is off in this cluster (tests/e2e/cluster_lib.sh), so each is lifted here.
func cmdNodes(args []string) {
	var c common
	fs := flag.NewFlagSet("nodes", flag.ExitOnError)
	c.register(fs)
	fs.Parse(args)
	k := c.kube()
	var mu sync.Mutex
	errs, firstErr := 0, ""
	start := time.Now()
	parallel(c.nodes, c.workers, func(i int) {
		name := c.nodeName(i)
		res := map[string]any{"cpu": "96", "memory": "1536Gi", "pods": "110", "nvidia.com/gpu": "8", "ephemeral-storage": "3500Gi"}
		node := map[string]any{"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": name,
				"labels": map[string]any{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
					"type": "kwok", "node.kubernetes.io/instance-type": "gpu-8x", "nvidia.com/gpu.count": "8"},
				"annotations": map[string]any{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
			"status": map[string]any{"capacity": res, "allocatable": res}}
		code, body, err := k.call("POST", "/api/v1/nodes", jsonType, node)
		if err == nil && code/100 != 2 && code != 409 {
			err = fmt.Errorf("POST node %s: %d %s", name, code, firstLine(body))
		}
		if err == nil && code != 409 { // one that exists is left as it is (node 0 carries the real agent's writes)
			_, err = k.must("PATCH", "/api/v1/nodes/"+name, mergePatch, map[string]any{"spec": map[string]any{"taints": nil}})
		}
		if err != nil {
			mu.Lock()
			if errs++; firstErr == "" {
				firstErr = err.Error()
			}
			mu.Unlock()
		}
	})
	printJSON(map[string]any{"nodes": c.nodes, "seconds": time.Since(start).Seconds(), "errors": errs, "first_error": firstErr})
	if errs > 0 {
		os.Exit(1)
	}
}

// cmdSync: one sync per node, as every node's agent does after a probe, and what it cost.
func cmdSync(args []string) {
	var c common
	fs := flag.NewFlagSet("sync", flag.ExitOnError)
	c.register(fs)
	tpl := fs.String("template", "", "what the real agent wrote (fleet.sh: template.json)")
	fs.Parse(args)
	t, err := loadTemplate(*tpl)
	check(err)
	k := c.kube()
	var mu sync.Mutex
	var lat []time.Duration
	errs, firstErr, below := 0, "", 0
	start := time.Now()
	parallel(c.nodes, c.workers, func(i int) {
		p := profileOf(c.nodeName(i), c.belowEvery)
		t0 := time.Now()
		_, err := syncNode(k, t, c.nodeName(i), p)
		d := time.Since(t0)
		mu.Lock()
		defer mu.Unlock()
		lat = append(lat, d)
		if p.below {
			below++
		}
		if err != nil {
			if errs++; firstErr == "" {
				firstErr = err.Error()
			}
		}
	})
	elapsed := time.Since(start)
	counts := k.snapshot()
	total := 0
	for _, v := range counts {
		total += v
	}
	printJSON(map[string]any{"nodes": c.nodes, "below": below, "workers": c.workers, "seconds": elapsed.Seconds(),
		"syncs_per_s": float64(c.nodes) / elapsed.Seconds(), "requests": counts, "requests_total": total,
		"requests_per_sync": float64(total) / float64(c.nodes), "sync": summarize(lat), "errors": errs, "first_error": firstErr})
	if errs > 0 {
		os.Exit(1)
	}
}
