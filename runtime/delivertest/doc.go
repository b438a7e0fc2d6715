// Package delivertest runs the delivery engine in `jadpo run` processes:
// several processes sharing one PostgreSQL store, and a process killed
// (SIGKILL) again and again while its handlers run. Its tests build
// cmd/jadpo once, in TestMain.
package delivertest
