package main

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// The commands that hold no message in hand end as soon as SIGINT or SIGTERM
// arrives, whatever they are waiting on (a slow disk, a database that does
// not answer, an editor that keeps stdin open): main catches both signals
// for `run`, `tick` and `dev`, which finish the message in hand, so without
// this a caught signal would do nothing to the others.
var endOnSignal = map[string]bool{"check": true, "build": true, "package": true, "lsp": true, "deliveries": true}

// Exit codes after a signal, as a shell reports a process the signal ended.
const (
	exitInterrupted = 128 + int(syscall.SIGINT)  // 130
	exitTerminated  = 128 + int(syscall.SIGTERM) // 143
)

// wrapEndOnSignal makes each of endOnSignal's commands, and their
// subcommands, return when e.ctx is done.
func (e *env) wrapEndOnSignal(root *cobra.Command) {
	var wrap func(c *cobra.Command)
	wrap = func(c *cobra.Command) {
		if c.RunE != nil {
			c.RunE = e.untilSignal(c.RunE)
		}
		for _, sub := range c.Commands() {
			wrap(sub)
		}
	}
	for _, c := range root.Commands() {
		if endOnSignal[c.Name()] {
			wrap(c)
		}
	}
}

// untilSignal runs the command and returns its result, or returns at once
// when e.ctx is done, leaving the command's goroutine to the process's exit.
func (e *env) untilSignal(run func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		done := make(chan error, 1)
		go func() { done <- run(c, args) }()
		select {
		case err := <-done:
			return err
		case <-e.ctx.Done():
			code, name := exitTerminated, "SIGTERM"
			if cause := context.Cause(e.ctx); cause != nil && cause.Error() == syscall.SIGINT.String()+" signal received" {
				code, name = exitInterrupted, "SIGINT"
			}
			// Say why, unless stderr is what the command is stuck on (a
			// reader that stopped reading): then the exit must not wait.
			said := make(chan struct{})
			go func() { fmt.Fprintf(e.stderr, "jadpo: stopped by %s\n", name); close(said) }()
			select {
			case <-said:
			case <-time.After(200 * time.Millisecond):
			}
			return exitError{code}
		}
	}
}
