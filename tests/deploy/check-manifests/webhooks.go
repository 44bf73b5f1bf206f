package main

import "fmt"

// checkWebhooks: each webhook of a Mutating/ValidatingWebhookConfiguration calls a Service of the
// input on a port that Service exposes, on the path iogate serves for that kind. The apiserver
// validates neither (it accepts a Service that does not exist); sideEffects and
// admissionReviewVersions it does validate, so they are not checked here.
func checkWebhooks(objs []*object) []problem {
	services := map[string]*object{}
	for _, o := range objs {
		if o.Kind == "Service" {
			services[o.Namespace+"/"+o.Name] = o
		}
	}
	var probs []problem
	for _, o := range objs {
		wantPath := map[string]string{
			"MutatingWebhookConfiguration":   "/mutate",
			"ValidatingWebhookConfiguration": "/validate",
		}[o.Kind]
		if wantPath == "" {
			continue
		}
		hooks := list(o.Doc, "webhooks")
		if len(hooks) == 0 {
			probs = append(probs, problem{o.ID(), "has no webhooks"})
		}
		for i, h := range hooks {
			name := str(h, "name")
			if name == "" {
				name = fmt.Sprintf("#%d", i)
			}
			add := func(format string, a ...interface{}) {
				probs = append(probs, problem{o.ID(), fmt.Sprintf("webhook %q: ", name) + fmt.Sprintf(format, a...)})
			}
			svc := get(h, "clientConfig", "service")
			if svc == nil {
				add("clientConfig has no service")
			} else {
				ns, sname := str(svc, "namespace"), str(svc, "name")
				port := 443 // the API server's default
				if p, ok := toInt(get(svc, "port")); ok {
					port = p
				}
				target := services[ns+"/"+sname]
				if target == nil {
					add("clientConfig.service %s/%s is not in the input", ns, sname)
				} else if !servicePorts(target)[port] {
					add("Service %s/%s has no port %d", ns, sname, port)
				}
				if p := str(svc, "path"); p != wantPath {
					add("clientConfig.service.path is %q, want %q", p, wantPath)
				}
			}
		}
	}
	return probs
}

func servicePorts(svc *object) map[int]bool {
	ports := map[int]bool{}
	for _, p := range list(svc.Doc, "spec", "ports") {
		if n, ok := toInt(get(p, "port")); ok {
			ports[n] = true
		}
	}
	return ports
}

func toInt(v interface{}) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}
