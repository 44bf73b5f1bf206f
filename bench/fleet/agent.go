package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"
	"time"
)

// What `iogate node` wrote on one real node (fleet.sh runs the agent once and reads its Node
// back): the template every simulated agent's writes are made from, with this node's figures.
type template struct {
	Labels      map[string]string `json:"labels"`      // iogate.io/* only
	Annotations map[string]string `json:"annotations"` // iogate.io/* only
	Condition   map[string]string `json:"condition"`   // the StorageBelowPolicy condition: type, status, reason, message
	TaintKey    string            `json:"taint_key"`
	TaintEffect string            `json:"taint_effect"`
}

func loadTemplate(file string) (*template, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("-template: %v", err)
	}
	var t template
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("-template %s: %v", file, err)
	}
	if len(t.Labels) == 0 || t.Annotations["iogate.io/report"] == "" || t.Condition["type"] == "" {
		return nil, fmt.Errorf("-template %s: want the agent's iogate.io/ labels, its iogate.io/report annotation and its condition", file)
	}
	if t.TaintKey == "" {
		t.TaintKey, t.TaintEffect = "iogate.io/storage-below-policy", "NoSchedule"
	}
	return &t, nil
}

// A node's storage as its agent measured it. Most nodes of a GPU fleet have local NVMe; a few
// run from a cloud block volume, some of those below the policy's floor (tainted).
type profile struct {
	class string
	iops  int64
	tier  string // fast | ok | slow
	below bool
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// profileOf: 1 node in belowEvery is below policy (3,000-15,000 IOPS: under the 20,000 an 8-GPU
// pod needs under the chart's policy), as many run on a cloud volume that meets it, the rest NVMe.
func profileOf(node string, belowEvery int) profile {
	h := hash(node)
	switch {
	case belowEvery > 0 && h%uint64(belowEvery) == 0:
		return belowProfile(node)
	case belowEvery > 0 && h%uint64(belowEvery) == 1:
		return profile{class: "cloud-block", iops: 25000 + int64(h>>8%35000), tier: "ok"}
	default:
		return profile{class: "nvme", iops: 250000 + int64(h>>8%650000), tier: "fast"}
	}
}

func belowProfile(node string) profile {
	return profile{class: "cloud-block", iops: 3000 + int64(hash(node)>>8%12000), tier: "slow", below: true}
}

// writes: the labels, annotations and condition an agent with profile p writes on its node.
func (t *template) labels(p profile) map[string]string {
	out := map[string]string{}
	for k, v := range t.Labels {
		switch {
		case strings.HasPrefix(k, "iogate.io/disk-class"):
			out[k] = p.class
		case strings.HasPrefix(k, "iogate.io/randread-iops"):
			out[k] = strconv.FormatInt(p.iops, 10)
		case k == "iogate.io/tier":
			out[k] = p.tier
		case strings.HasPrefix(k, "iogate.io/accelerators."):
			if p.below {
				out[k] = "0"
			} else {
				out[k] = "8"
			}
		default:
			out[k] = v
		}
	}
	return out
}

func (t *template) annotations(p profile, now time.Time) map[string]any {
	out := map[string]any{}
	for k, v := range t.Annotations {
		out[k] = v
	}
	var report map[string]any
	if json.Unmarshal([]byte(t.Annotations["iogate.io/report"]), &report) == nil {
		outcome := "pass"
		if p.below {
			outcome = "fail"
		}
		report["outcome"] = outcome
		report["gpus"] = 8
		for _, e := range arr(report, "paths") {
			if m, ok := e.(map[string]any); ok {
				m["class"], m["iops"], m["outcome"], m["tier"] = p.class, p.iops, outcome, p.tier
				if _, ok := m["randread_iops"]; ok {
					m["randread_iops"] = p.iops
				}
				m["measured_at"] = now.UTC().Format(time.RFC3339)
			}
		}
		b, _ := json.Marshal(report)
		out["iogate.io/report"] = string(b)
	}
	if _, ok := out["iogate.io/last-probe"]; ok {
		out["iogate.io/last-probe"] = now.UTC().Format(time.RFC3339)
	}
	return out
}

func (t *template) condition(p profile) (status, reason, message string) {
	status, reason = "False", "StorageMeetsPolicy"
	if p.below {
		status, reason = "True", "StorageBelowPolicy"
	}
	message = t.Condition["message"]
	if t.Condition["status"] != status || message == "" {
		message = fmt.Sprintf("best path /var/lib/iogate (%s): %d randread IOPS against the policy's floor", p.class, p.iops)
	}
	return status, reason, message
}
