//go:build tools

// OpenKruise v1.9.0's kruise-manager, for the migration end-to-end test: pinned here, built with
// `go build github.com/openkruise/kruise` (its replace block is copied into go.mod; the checksum
// database does not know this release: go.sum is committed, GONOSUMDB=github.com/openkruise to
// regenerate it).
package tools

import _ "github.com/openkruise/kruise"
