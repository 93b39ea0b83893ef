//go:build tools

// Package tools pins the Kubernetes and etcd servers, kubectl, and the node tier's kubelet and
// scheduler, of one Kubernetes version of the version matrix (npm run test:k8s-versions).
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
