package bearer

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestAuthorize(t *testing.T) {
	const secret = "tok-DO-NOT-PRINT"
	tok, err := New(secret)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "https://api.example.com/", nil)
	if err := tok.Authorize(req, nil); err != nil {
		t.Fatal(err)
	}
	if got := req.Header.Get("Authorization"); got != "Bearer "+secret {
		t.Errorf("Authorization = %q", got)
	}
	shown := fmt.Sprintf("%v %+v %#v %s %q %x %d", tok, tok, tok, tok, tok, tok, tok) + fmt.Sprintf("%+v %#v", *tok, struct{ T *Token }{tok})
	if strings.Contains(shown, secret) || strings.Contains(shown, fmt.Sprintf("%x", secret)) {
		t.Errorf("token shown: %s", shown)
	}
	for _, bad := range []string{"", "a b", "a\tb", "a\r\nX-Evil: 1", "a\x7f"} {
		if _, err := New(bad); err == nil {
			t.Errorf("%q accepted", bad)
		} else if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("error shows the token: %v", err)
		}
	}
}
