package main

import (
	"encoding/json"
	"fmt"
	"time"
)

// syncNode replays, request for request, what `iogate node` does after a probe
// (agent/node/node_sync.cc and agent/kube: operations.h, node_taints.cc, node_conditions.cc):
//
//	GET node
//	PATCH node (merge: labels)                     only when a label changes
//	PATCH node (merge: annotations)                always (report, last-probe)
//	GET node, PATCH node (taints, resourceVersion) per stale taint effect, and for the wanted
//	                                               taint (no PATCH when it is already there)
//	GET node, PATCH node/status (strategic merge)  the StorageBelowPolicy condition
//	POST events (events.k8s.io/v1)                 when the condition's status changed
//
// labelsAcked is when the labels patch was answered (zero when none was needed): from then on
// the API serves the new labels.
func syncNode(k *kube, t *template, node string, p profile) (labelsAcked time.Time, err error) {
	path := "/api/v1/nodes/" + node
	n, err := k.getJSON(path)
	if err != nil {
		return
	}
	now := time.Now()
	meta := obj(n, "metadata")
	current := obj(meta, "labels")
	want := t.labels(p)
	changed := map[string]any{}
	for key, v := range want {
		if cur, ok := current[key].(string); !ok || cur != v {
			changed[key] = v
		}
	}
	if len(changed) > 0 {
		// The agent sends its whole label set when any differs (MetadataChanges: all keys).
		all := map[string]any{}
		for key, v := range want {
			all[key] = v
		}
		if _, err = k.must("PATCH", path, mergePatch, map[string]any{"metadata": map[string]any{"labels": all}}); err != nil {
			return
		}
		labelsAcked = time.Now()
	}
	if _, err = k.must("PATCH", path, mergePatch,
		map[string]any{"metadata": map[string]any{"annotations": t.annotations(p, now)}}); err != nil {
		return
	}
	wantEffect := ""
	if p.below {
		wantEffect = t.TaintEffect
	}
	for _, tt := range arr(obj(n, "spec"), "taints") {
		m, _ := tt.(map[string]any)
		if str(m, "key") == t.TaintKey && str(m, "effect") != wantEffect {
			if err = editTaints(k, node, t.TaintKey, str(m, "effect"), false); err != nil {
				return
			}
		}
	}
	if p.below {
		if err = editTaints(k, node, t.TaintKey, wantEffect, true); err != nil {
			return
		}
	}
	previous := ""
	for _, c := range arr(obj(n, "status"), "conditions") {
		m, _ := c.(map[string]any)
		if str(m, "type") == t.Condition["type"] {
			previous = str(m, "status")
		}
	}
	status, reason, message := t.condition(p)
	if err = setCondition(k, node, t.Condition["type"], status, reason, message); err != nil {
		return
	}
	if status != previous {
		kind, eventReason := "Normal", "StoragePolicyMet"
		if p.below {
			kind, eventReason = "Warning", "StorageBelowPolicy"
		}
		// Best effort, as in the agent: a refused Event does not fail the sync.
		k.call("POST", "/apis/events.k8s.io/v1/namespaces/default/events", jsonType, map[string]any{
			"apiVersion": "events.k8s.io/v1", "kind": "Event",
			"metadata":  map[string]any{"name": fmt.Sprintf("%s.%x", node, time.Now().UnixNano()), "namespace": "default"},
			"eventTime": time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
			"regarding": map[string]any{"kind": "Node", "name": node, "uid": str(meta, "uid"), "apiVersion": "v1"},
			"type":      kind, "reason": eventReason, "note": message, "action": "Probe",
			"reportingController": "iogate.io/node", "reportingInstance": "iogate-node-" + node,
		})
	}
	return
}

// editTaints: GET the node, add (or remove) the taint with this key and effect, PATCH the whole
// list with the GET's resourceVersion; on 409 read again, at most 5 more times.
func editTaints(k *kube, node, key, effect string, add bool) error {
	path := "/api/v1/nodes/" + node
	for round := 0; ; round++ {
		n, err := k.getJSON(path)
		if err != nil {
			return err
		}
		var out []any
		present := false
		for _, tt := range arr(obj(n, "spec"), "taints") {
			m, _ := tt.(map[string]any)
			if str(m, "key") == key && str(m, "effect") == effect {
				present = true
				if !add {
					continue
				}
			}
			out = append(out, tt)
		}
		if add == present {
			return nil // already as wanted: no PATCH
		}
		if add {
			out = append(out, map[string]any{"key": key, "value": "true", "effect": effect})
		}
		var taints any = out
		if len(out) == 0 {
			taints = nil
		}
		code, body, err := k.call("PATCH", path, mergePatch, map[string]any{
			"metadata": map[string]any{"resourceVersion": str(obj(n, "metadata"), "resourceVersion")},
			"spec":     map[string]any{"taints": taints}})
		if err != nil {
			return err
		}
		if code/100 == 2 {
			return nil
		}
		if code != 409 || round >= 5 {
			return fmt.Errorf("PATCH %s taints: %d %s", path, code, firstLine(body))
		}
	}
}

// setCondition: GET the node (to keep lastTransitionTime when the status is unchanged), then a
// strategic merge patch of the one condition on nodes/NAME/status.
func setCondition(k *kube, node, typ, status, reason, message string) error {
	n, err := k.getJSON("/api/v1/nodes/" + node)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	transition := now
	for _, c := range arr(obj(n, "status"), "conditions") {
		m, _ := c.(map[string]any)
		if str(m, "type") == typ && str(m, "status") == status && str(m, "lastTransitionTime") != "" {
			transition = str(m, "lastTransitionTime")
		}
	}
	_, err = k.must("PATCH", "/api/v1/nodes/"+node+"/status", strategicPatch, map[string]any{"status": map[string]any{
		"conditions": []any{map[string]any{"type": typ, "status": status, "reason": reason, "message": message,
			"lastHeartbeatTime": now, "lastTransitionTime": transition}}}})
	return err
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
