// Package processtest holds the runtime's tests that run `jadpo run` as
// child processes and kill them:
//
//   - the fault tests: processes killed with SIGKILL at seeded random
//     moments and restarted while messages flow (on the SQS fake, the
//     Cloudflare Queues fake and an SQL inbox), and several processes
//     sharing one queue and one PostgreSQL store, each test ending by
//     checking with SQL that every message was kept exactly once
//     (docs/design/runtime.md, "Faults, tested");
//   - the delivery tests: several processes sharing one store's deliveries,
//     a process killed again and again while its handlers run, and the
//     `jadpo deliveries` commands on what they left.
//
// The package is tests only, and internal: its helpers (the child process,
// the Cloudflare and SQL inbox worlds) are in its _test.go files beside the
// tests that use them; the child process itself is internal/jadpoproc's, shared
// with cmd/jadpo's tests. Its tests build cmd/jadpo once per run, in TestMain.
// JADPO_FAULT_SEED changes the seed of the kills and of the messages.
package processtest
