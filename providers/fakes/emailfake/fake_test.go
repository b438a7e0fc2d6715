package emailfake

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, auth, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func TestFakeRecordsRefusesAndAnswersAsResend(t *testing.T) {
	var seen []Mail
	f, url := NewTest(t, Options{Method: "POST", Path: "/emails", OnMail: func(m Mail) { seen = append(seen, m) }})
	mail := `{"from":"Shop <s@example.com>","to":"a@example.com","subject":"Hi","text":"\nLine one\r\nLine two"}`
	if st, out := post(t, url+"/emails", "", mail); st != 401 || out["name"] != "missing_api_key" || out["statusCode"] != 401.0 {
		t.Errorf("no token: %d %v", st, out)
	}
	if st, out := post(t, url+"/emails", "Bearer nope", mail); st != 403 || out["name"] != "invalid_api_key" {
		t.Errorf("a wrong token: %d %v", st, out)
	}
	if st, out := post(t, url+"/other", "Bearer "+DefaultToken, mail); st != 404 || out["name"] != "not_found" {
		t.Errorf("another path: %d %v", st, out)
	}
	f.Refuse(Refusal{429, "rate_limit_exceeded"})
	if st, out := post(t, url+"/emails", "Bearer "+DefaultToken, mail); st != 429 || out["name"] != "rate_limit_exceeded" {
		t.Errorf("scripted: %d %v", st, out)
	}
	st, out := post(t, url+"/emails", "Bearer "+DefaultToken, mail)
	if st != 200 || out["id"] == "" {
		t.Fatalf("taken: %d %v", st, out)
	}
	if len(f.Mails()) != 2 || len(f.Sent()) != 1 || len(seen) != 1 {
		t.Fatalf("mails %d, sent %d, seen %d", len(f.Mails()), len(f.Sent()), len(seen))
	}
	m := f.Sent()[0]
	if m.To != "a@example.com" || m.Subject != "Hi" || m.FirstLine() != "Line one" || m.Body["from"] != "Shop <s@example.com>" ||
		m.Auth != "Bearer "+DefaultToken || m.Path != "/emails" {
		t.Errorf("mail %+v", m)
	}
}

// Another package's members, and an HTML-only mail's first line.
func TestFakeMembersFromTheMapping(t *testing.T) {
	f, url := NewTest(t, Options{Token: "-", Members: map[string]string{"to": "recipient", "subject": "title", "text": "body_text", "html": "body_html"}})
	post(t, url+"/any", "Bearer x", `{"recipient":["b@example.com"],"title":"T","body_html":"<p>Hello</p>\n<p>more</p>"}`)
	m := f.Sent()
	if len(m) != 1 || m[0].To != "b@example.com" || m[0].Subject != "T" || m[0].Text != "" || m[0].FirstLine() != "<p>Hello</p>" {
		t.Fatalf("%+v", m)
	}
}
