//go:build tools

// Package tools pins the Kubernetes and etcd servers the end-to-end tests run, kubectl (kustomize,
// server-side dry runs) for the chart tests, and the kubelet of the node tier.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
