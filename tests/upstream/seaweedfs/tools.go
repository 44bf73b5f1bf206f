//go:build tools

// Pins the weed command's package, so go mod tidy keeps its dependencies in go.sum.
package tools

import _ "github.com/seaweedfs/seaweedfs/weed"
