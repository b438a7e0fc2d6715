package standin

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
)

// Issue 12 point 1: dev's own guard refuses an address off the machine
// before dialling or looking it up, whatever opens it.
func TestDevDialerRefusesAddressesOffTheMachine(t *testing.T) {
	var dialled []string
	guard := LoopbackOnly(func(_ context.Context, network, addr string) (net.Conn, error) {
		dialled = append(dialled, addr)
		return nil, fmt.Errorf("not dialling in a test")
	})
	for _, addr := range []string{"sqs.eu-west-1.amazonaws.com:443", "10.0.0.7:5432", "[2001:db8::1]:443", "127.0.0.1.example.com:80", "8.8.8.8:53"} {
		if _, err := guard(context.Background(), "tcp", addr); err == nil || !strings.Contains(err.Error(), "never leaves this machine") {
			t.Errorf("%s: %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:9324", "[::1]:80", "localhost:5432"} {
		_, _ = guard(context.Background(), "tcp", addr)
	}
	if fmt.Sprint(dialled) != "[127.0.0.1:9324 [::1]:80 localhost:5432]" {
		t.Fatalf("dialled %v", dialled)
	}
}
