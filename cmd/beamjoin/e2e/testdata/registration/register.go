//go:build register

package main

import "github.com/beamjoin/beamjoin/transforms/join"

// The call a program with workers in another process must make.
func init() { join.RegisterTypes[string, Order, Payment]() }
