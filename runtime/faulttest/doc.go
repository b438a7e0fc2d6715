// Package faulttest holds the runtime's process-level fault tests: `jadpo
// run` as child processes, killed with SIGKILL at seeded random moments and
// restarted while messages flow, and several processes sharing one queue and
// one PostgreSQL store. Each ends by checking with SQL that every message was
// kept exactly once (docs/runtime.md, "Faults, tested").
//
// The package has no code of its own; its tests build cmd/jadpo once per
// run. JADPO_FAULT_SEED changes the seed of the kills and of the messages.
package faulttest
