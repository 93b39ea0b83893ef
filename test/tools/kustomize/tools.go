//go:build tools

// Package tools pins the kustomize the generator's end-to-end test runs (kustomize build with exec functions).
package tools

import (
	_ "sigs.k8s.io/kustomize/kustomize/v5"
)
