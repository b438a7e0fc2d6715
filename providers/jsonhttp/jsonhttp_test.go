package jsonhttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers"
	"github.com/jadpo/jadpo/providers/bearer"
	"github.com/jadpo/jadpo/providers/jsonhttp"
	"github.com/jadpo/jadpo/providers/wire"
)

const token = "cf-token-DO-NOT-PRINT"

var pullOp = wire.Operation{
	Resource: "messages", Name: "pull", RetrySafe: true,
	Method: "post", Path: "/client/v4/accounts/{account_id}/queues/{queue_id}/messages/pull",
	Input: &wire.Shape{Kind: wire.Record, Fields: []wire.Field{
		{Name: "batch_size", Shape: wire.Shape{Kind: wire.Int}},
		{Name: "visibility_timeout_ms", Shape: wire.Shape{Kind: wire.Int, Optional: true}},
	}},
	Output: &wire.Shape{Kind: wire.Record, Fields: []wire.Field{
		{Name: "result", Shape: wire.Shape{Kind: wire.Record, Fields: []wire.Field{
			{Name: "messages", Shape: wire.Shape{Kind: wire.List, Elem: &wire.Shape{Kind: wire.Record, Fields: []wire.Field{
				{Name: "id", Shape: wire.Shape{Kind: wire.Text}},
				{Name: "body", Shape: wire.Shape{Kind: wire.Text}},
				{Name: "lease_id", WireName: "leaseId", Shape: wire.Shape{Kind: wire.Text}},
				{Name: "attempts", Shape: wire.Shape{Kind: wire.Int, Optional: true}},
			}}}},
		}}},
	}},
}

func provider(errorCode string) ir.Provider {
	return ir.Provider{Protocol: ir.ProtocolJSONHTTP, Credential: ir.CredentialBearer, ErrorCode: errorCode}
}

func TestCall(t *testing.T) {
	type seen struct{ method, rawPath, auth, ctype, body string }
	var got seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = seen{r.Method, r.URL.EscapedPath(), r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(b)}
		io.WriteString(w, `{"success":true,"result":{"messages":[{"id":"1","body":"{}","leaseId":"L1"}]}}`)
	}))
	defer srv.Close()
	c, err := providers.NewClient(provider("errors.0.code"), srv.URL+"/base/",
		map[string]string{"token": token},
		map[string]string{"account_id": "acc/1 x", "queue_id": "q1"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Call(context.Background(), pullOp, map[string]any{"batch_size": 10})
	if err != nil {
		t.Fatal(err)
	}
	want := seen{"POST", "/base/client/v4/accounts/acc%2F1%20x/queues/q1/messages/pull", "Bearer " + token, "application/json", `{"batch_size":10}`}
	if got != want {
		t.Errorf("request\n got %+v\nwant %+v", got, want)
	}
	m := out["result"].(map[string]any)["messages"].([]any)[0].(map[string]any)
	if m["lease_id"] != "L1" || m["attempts"] != nil {
		t.Errorf("answer %#v", out)
	}
}

func TestNoInputNoBody(t *testing.T) {
	var hadBody bool
	var ctype string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hadBody, ctype = len(b) > 0, r.Header.Get("Content-Type")
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	c, _ := providers.NewClient(provider(""), srv.URL, map[string]string{"token": token}, nil, nil, nil)
	op := wire.Operation{Resource: "queues", Name: "list", Method: "GET", Path: "/queues?name={missing}"}
	if _, err := c.Call(context.Background(), op, nil); err == nil || !strings.Contains(err.Error(), "{missing}") {
		t.Errorf("missing placeholder: %v", err)
	}
	op.Path = "/queues"
	if _, err := c.Call(context.Background(), op, nil); err != nil {
		t.Fatal(err)
	}
	if hadBody || ctype != "" {
		t.Errorf("GET without input sent a body (%v) or a content type (%q)", hadBody, ctype)
	}
}

func TestRefusalCodes(t *testing.T) {
	cases := []struct {
		errorCode string
		status    int
		body      string
		code      string
		temporary bool
	}{
		{"errors.0.code", 400, `{"success":false,"errors":[{"code":10001,"message":"bad"}]}`, "code_10001", false},
		{"error.type", 403, `{"error":{"type":"PermissionDenied"}}`, "permission_denied", false},
		{"code", 429, `{"code":"rate-limited"}`, "rate_limited", true},
		{"code", 400, `{"code":"ThrottledRequest"}`, "throttled_request", true},
		{"errors.0.code", 400, `{"errors":[]}`, "http_400", false},
		{"errors.0.code", 502, `bad gateway`, "http_502", true},
		{"", 409, `{"code":"conflict"}`, "http_409", false},
		{"code", 400, `{"code":1.5}`, "http_400", false},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		}))
		cl, _ := providers.NewClient(provider(c.errorCode), srv.URL, map[string]string{"token": token},
			map[string]string{"account_id": "a", "queue_id": "q"}, nil, nil)
		_, err := cl.Call(context.Background(), pullOp, map[string]any{"batch_size": 1})
		srv.Close()
		var r *wire.Refusal
		if !errors.As(err, &r) {
			t.Fatalf("%s: %v", c.body, err)
		}
		if r.Code != c.code || r.Temporary != c.temporary {
			t.Errorf("%s at %q: got %+v, want %s temporary=%v", c.body, c.errorCode, r, c.code, c.temporary)
		}
	}
}

func TestFillPath(t *testing.T) {
	s := map[string]string{"a": "x y/z", "b": "1&2"}
	got, err := jsonhttp.FillPath("/v1/{a}/items?filter={b}&k=v", s)
	if err != nil || got != "/v1/x%20y%2Fz/items?filter=1%262&k=v" {
		t.Errorf("got %q %v", got, err)
	}
	if _, err := jsonhttp.FillPath("/v1/{a", s); err == nil {
		t.Error("unclosed brace accepted")
	}
}

func TestTokenNeverShown(t *testing.T) {
	tok, err := bearer.New(token)
	if err != nil {
		t.Fatal(err)
	}
	type holder struct{ t *bearer.Token }
	h := holder{tok}
	var out strings.Builder
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		fmt.Fprintf(&out, verb+"\n", tok)
		fmt.Fprintf(&out, verb+"\n", h)
		fmt.Fprintf(&out, verb+"\n", &h)
		fmt.Fprintf(&out, verb+"\n", *tok)
	}
	var logs strings.Builder
	slog.New(slog.NewTextHandler(&logs, nil)).Info("calling", "token", tok)
	out.WriteString(logs.String())
	if strings.Contains(out.String(), token) {
		t.Fatalf("token shown:\n%s", out.String())
	}
	for _, bad := range []string{"", "a b", "a\nb", "a\x00"} {
		_, err := bearer.New(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// Building a client with a bad credential names the member, not the value.
	_, err = providers.NewClient(provider(""), "https://api.example.com", map[string]string{"token": "bad token-DO-NOT-PRINT"}, nil, nil, nil)
	if err == nil || strings.Contains(err.Error(), "DO-NOT-PRINT") {
		t.Errorf("err = %v", err)
	}
}
