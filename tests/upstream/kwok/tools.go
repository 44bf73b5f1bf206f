//go:build tools

// Pins the kwok command's package, so go mod tidy keeps its dependencies in go.sum.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
