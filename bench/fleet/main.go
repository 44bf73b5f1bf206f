// fleet drives bench/fleet.sh's cluster: thousands of Node objects (kwok keeps them alive), the
// label writes of one node agent per node, a paced burst of GPU pods through the API server,
// AdmissionReviews straight to the webhook, and the time the webhook takes to see label changes.
// Each subcommand prints one JSON object on stdout; fleet.sh turns them into bench/results/fleet.tsv.
//
//	fleet nodes  -n 5000                       create the nodes (kwok's annotation, 8 GPUs each)
//	fleet sync   -n 5000 -template t.json      one agent sync per node (the requests, by verb)
//	fleet pods   -n 1000 -rate 200             create GPU pods at a fixed rate (open loop)
//	fleet direct -addr A -rate 200             POST /validate at a fixed rate (open loop)
//	fleet lag    -n 500 -addr A                flip 500 nodes below policy; time until /validate denies
//	fleet metrics before.txt after.txt         the API server's /metrics between two scrapes
//
// Standard library only.
package main

import (
	"flag"
	"fmt"
	"os"
)

type common struct {
	server, ca, cert, key string
	prefix                string
	nodes, workers        int
	belowEvery            int
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.server, "server", "", "the API server's URL")
	fs.StringVar(&c.ca, "ca", "", "the cluster's CA (PEM)")
	fs.StringVar(&c.cert, "cert", "", "client certificate (PEM)")
	fs.StringVar(&c.key, "key", "", "client key (PEM)")
	fs.StringVar(&c.prefix, "prefix", "fleet-", "node name prefix (names PREFIX00000...)")
	fs.IntVar(&c.nodes, "nodes", 5000, "nodes in the cluster")
	fs.IntVar(&c.workers, "workers", 16, "requests in flight")
	fs.IntVar(&c.belowEvery, "below-every", 20, "1 node in this many is below policy (tainted)")
}

func (c *common) kube() *kube {
	k, err := newKube(c.server, c.ca, c.cert, c.key)
	check(err)
	return k
}

func (c *common) nodeName(i int) string { return fmt.Sprintf("%s%05d", c.prefix, i) }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fleet nodes|sync|pods|direct|lag|metrics [flags] (fleet CMD -h)")
		os.Exit(2)
	}
	cmds := map[string]func([]string){"nodes": cmdNodes, "sync": cmdSync, "pods": cmdPods, "direct": cmdDirect, "lag": cmdLag,
		"metrics": cmdMetrics}
	run, ok := cmds[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "fleet: unknown command %q (nodes, sync, pods, direct, lag, metrics)\n", os.Args[1])
		os.Exit(2)
	}
	run(os.Args[2:])
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

func printJSON(v any) { fmt.Println(mustJSON(v)) }
