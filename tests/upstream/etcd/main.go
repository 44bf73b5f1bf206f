// etcd's own entry point (go.etcd.io/etcd/v3's main.go is exactly this call), so the server module
// alone builds the binary the tests run.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
