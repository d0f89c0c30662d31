//go:build specsonly

package main

// A testenv built with `-tags specsonly` has no node: only what `make specs`
// needs from a release other than the pinned one (the node follows the
// kubelet's libraries, whose packages move between releases).

import "errors"

var errNoNode = errors.New("this kube-testenv was built with -tags specsonly, without the node")

func runNode(args []string) error { return errNoNode }

func cmdServeHTTP(args []string) error { return errNoNode }
