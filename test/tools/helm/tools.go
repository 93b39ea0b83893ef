//go:build tools

// Package tools pins the helm client the chart tests run (helm lint, helm template).
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
