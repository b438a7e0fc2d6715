package sigv4

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Authorization is a parsed `Authorization: AWS4-HMAC-SHA256 ...` header.
type Authorization struct {
	KeyID         string
	Date          string // YYYYMMDD of the credential scope
	Region        string
	Service       string
	SignedHeaders []string
	Signature     string
}

// ParseAuthorization reads an Authorization header value. Its errors are
// *VerifyError with Reason Incomplete.
func ParseAuthorization(v string) (Authorization, error) {
	var a Authorization
	rest, ok := strings.CutPrefix(v, Algorithm+" ")
	if !ok {
		return a, incomplete("Authorization header requires the %s algorithm", Algorithm)
	}
	var cred, signed, sig string
	var haveCred, haveSigned, haveSig bool
	for part := range strings.SplitSeq(rest, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return a, incomplete("Authorization header has a malformed component")
		}
		switch k {
		case "Credential":
			cred, haveCred = val, true
		case "SignedHeaders":
			signed, haveSigned = val, true
		case "Signature":
			sig, haveSig = val, true
		default:
			return a, incomplete("Authorization header has an unknown component")
		}
	}
	switch {
	case !haveCred:
		return a, incomplete("Authorization header requires 'Credential' parameter")
	case !haveSigned:
		return a, incomplete("Authorization header requires 'SignedHeaders' parameter")
	case !haveSig:
		return a, incomplete("Authorization header requires 'Signature' parameter")
	}
	scope := strings.Split(cred, "/")
	if len(scope) != 5 || scope[0] == "" || scope[4] != "aws4_request" || len(scope[1]) != 8 || scope[2] == "" || scope[3] == "" {
		return a, incomplete("Credential should be scoped to a valid key id, date, region and service, ending in aws4_request")
	}
	if signed == "" {
		return a, incomplete("Authorization header requires a non-empty 'SignedHeaders' parameter")
	}
	a.KeyID, a.Date, a.Region, a.Service = scope[0], scope[1], scope[2], scope[3]
	a.SignedHeaders = strings.Split(signed, ";")
	a.Signature = sig
	return a, nil
}

// Reason says why a request's signature was refused.
type Reason int

// The reasons a signature is refused.
const (
	// Missing: no Authorization header.
	Missing Reason = iota + 1
	// Incomplete: the Authorization header or X-Amz-Date is malformed, or host
	// is not signed.
	Incomplete
	// UnknownKey: the key id is not one the verifier knows.
	UnknownKey
	// Mismatch: the signature is not the one the verifier computes.
	Mismatch
	// Expired: X-Amz-Date is more than the allowed skew away from now.
	Expired
)

// VerifyError is a refused signature. Its message never holds a secret: at
// most the canonical request and string to sign the verifier computed, which
// a client may need to find its mistake.
type VerifyError struct {
	Reason  Reason
	Message string
}

func (e *VerifyError) Error() string { return "sigv4: " + e.Message }

func incomplete(format string, args ...any) *VerifyError {
	return &VerifyError{Reason: Incomplete, Message: fmt.Sprintf(format, args...)}
}

// Verifier checks the signatures of incoming requests, as a service does.
type Verifier struct {
	// Lookup gives the credentials of a key id; false refuses it as UnknownKey.
	Lookup func(keyID string) (Credentials, bool)
	// Service, when set, is the only service a signature may be scoped to.
	Service string
	// MaxSkew is how far X-Amz-Date may be from now; 0 means 15 minutes.
	MaxSkew time.Duration

	// signers keeps a signer per key id, service and region, so that its
	// derived key (four HMACs, changing daily) is not derived per request.
	signers sync.Map // signerKey -> *cachedSigner
}

type signerKey struct{ keyID, service, region string }

type cachedSigner struct {
	secret string
	signer *Signer
}

// Verify checks req, whose body is body, at time now. It returns nil or a
// *VerifyError.
func (v *Verifier) Verify(req *http.Request, body []byte, now time.Time) error {
	authz := req.Header.Get("Authorization")
	if authz == "" {
		return &VerifyError{Reason: Missing, Message: "Missing Authentication Token"}
	}
	a, err := ParseAuthorization(authz)
	if err != nil {
		return err
	}
	hasHost := false
	for _, h := range a.SignedHeaders {
		if h == "host" {
			hasHost = true
		}
	}
	if !hasHost {
		return incomplete("'Host' must be a 'SignedHeader' in the AWS Authorization")
	}
	amzDate := req.Header.Get("X-Amz-Date")
	if amzDate == "" {
		return incomplete("Authorization header requires existence of a 'X-Amz-Date' header")
	}
	t, err := time.Parse(TimeFormat, amzDate)
	if err != nil {
		return incomplete("X-Amz-Date must be in the ISO8601 basic format")
	}
	if v.Service != "" && a.Service != v.Service {
		return &VerifyError{Reason: Mismatch, Message: fmt.Sprintf("Credential should be scoped to correct service: '%s'", v.Service)}
	}
	if a.Date != amzDate[:8] {
		return &VerifyError{Reason: Mismatch, Message: "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP"}
	}
	skew := v.MaxSkew
	if skew <= 0 {
		skew = 15 * time.Minute
	}
	now = now.UTC()
	if t.Before(now.Add(-skew)) {
		return &VerifyError{Reason: Expired, Message: fmt.Sprintf("Signature expired: %s is now earlier than %s (%s - %s)",
			amzDate, now.Add(-skew).Format(TimeFormat), now.Format(TimeFormat), fmtSkew(skew))}
	}
	if t.After(now.Add(skew)) {
		return &VerifyError{Reason: Expired, Message: fmt.Sprintf("Signature not yet current: %s is still later than %s (%s + %s)",
			amzDate, now.Add(skew).Format(TimeFormat), now.Format(TimeFormat), fmtSkew(skew))}
	}
	creds, ok := v.Lookup(a.KeyID)
	if !ok || !creds.Valid() {
		return &VerifyError{Reason: UnknownKey, Message: "The security token included in the request is invalid."}
	}
	sk := signerKey{a.KeyID, a.Service, a.Region}
	var s *Signer
	if c, ok := v.signers.Load(sk); ok && c.(*cachedSigner).secret == creds.secret() {
		s = c.(*cachedSigner).signer
	} else {
		var err error
		if s, err = NewSigner(creds, a.Service, a.Region); err != nil {
			return &VerifyError{Reason: UnknownKey, Message: "The security token included in the request is invalid."}
		}
		v.signers.Store(sk, &cachedSigner{secret: creds.secret(), signer: s})
	}
	header := req.Header
	if header.Get("Content-Length") == "" && req.ContentLength >= 0 {
		header = header.Clone()
		header.Set("Content-Length", strconv.FormatInt(req.ContentLength, 10))
	}
	host := req.Host
	if host == "" && req.URL != nil {
		host = req.URL.Host
	}
	r := Request{
		Method:        req.Method,
		Path:          uriPath(req.URL),
		RawQuery:      req.URL.RawQuery,
		Host:          host,
		Header:        header,
		PayloadHash:   PayloadHash(body),
		SignedHeaders: a.SignedHeaders,
	}
	res := s.Explain(&r, t)
	if subtle.ConstantTimeCompare([]byte(res.Signature), []byte(a.Signature)) != 1 {
		return &VerifyError{Reason: Mismatch, Message: "The request signature we calculated does not match the signature you provided. " +
			"Check your AWS Secret Access Key and signing method. Consult the service documentation for details.\n\n" +
			"The Canonical String for this request should have been\n'" + res.CanonicalRequest + "'\n\n" +
			"The String-to-Sign should have been\n'" + res.StringToSign + "'\n"}
	}
	return nil
}

func fmtSkew(d time.Duration) string {
	return strconv.Itoa(int(d/time.Minute)) + " min."
}

// PayloadHash is the hex SHA-256 of body.
func PayloadHash(body []byte) string {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.h.Reset()
	sc.h.Write(body)
	hexEncode(sc.phex[:], sc.h.Sum(sc.sum[:0]))
	return string(sc.phex[:])
}
