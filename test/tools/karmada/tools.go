//go:build tools

// Package tools pins the Karmada servers the fleet tier runs (a Karmada control plane in push mode
// over member control planes) and karmadactl, whose `interpret --check` validates our interpreter.
package tools

import (
	_ "github.com/karmada-io/karmada/cmd/aggregated-apiserver"
	_ "github.com/karmada-io/karmada/cmd/controller-manager"
	_ "github.com/karmada-io/karmada/cmd/karmadactl"
	_ "github.com/karmada-io/karmada/cmd/scheduler"
	_ "github.com/karmada-io/karmada/cmd/webhook"
)
