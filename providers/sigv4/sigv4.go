// Package sigv4 is CredentialScheme.aws_sigv4: AWS Signature Version 4 for
// requests sent in headers, written for this project so that signing a call
// costs a few hundred nanoseconds and a handful of allocations.
//
// What is signed, as AWS's published test suite signs it:
//
//   - the method; the path as sent on the wire, its dot segments and empty
//     segments removed and then URI-encoded once more (every byte but
//     A-Z a-z 0-9 - _ . ~ and '/'), which is the "encode twice" rule of every
//     service but S3; the query's pairs decoded, re-encoded the same way and
//     sorted by name then value;
//   - every header but User-Agent (and Authorization, which carries the
//     signature), named in lower case, values trimmed, inner runs of spaces
//     folded to one, repeated headers joined with ','; plus host (the
//     request's Host, a default port dropped), X-Amz-Date, X-Amz-Security-Token
//     when the credentials carry a session token, and content-length when the
//     request has a body of known length;
//   - the body's SHA-256 (no X-Amz-Content-Sha256 header is added).
//
// The region is read from an AWS host (`<service>.<region>.amazonaws.com`,
// SQS's `<region>.queue.amazonaws.com`, a VPC endpoint's
// `....<region>.vpce.amazonaws.com`, China's `.amazonaws.com.cn`); any other
// host signs for us-east-1, as AWS's own tools sign for a local emulator
// (RegionForHost).
//
// The secret never leaves this package: it is in no header, error or
// formatted value (see Credentials).
package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding"
	"errors"
	"hash"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Algorithm is the signing algorithm's name.
const Algorithm = "AWS4-HMAC-SHA256"

// TimeFormat is X-Amz-Date's layout.
const TimeFormat = "20060102T150405Z"

// EmptyPayloadHash is the hex SHA-256 of an empty body.
const EmptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// DefaultRegion is the region signed for on any host RegionForHost reads no
// region from.
const DefaultRegion = "us-east-1"

// Request is the neutral form of a request to sign. Header holds the headers
// as they will be sent (Host, User-Agent and Authorization in it are not
// signed); the signer adds host from Host.
type Request struct {
	Method string // "" means GET
	// Path is the path as sent on the wire, already escaped ("/a%20b"); ""
	// means "/".
	Path     string
	RawQuery string // the query as sent, without '?'
	Host     string
	Header   http.Header
	// ContentLength, when > 0 and Header has no Content-Length, signs
	// content-length as the request will send it.
	ContentLength int64
	// PayloadHash is the hex SHA-256 of the body; "" means an empty body.
	PayloadHash string
	// SignedHeaders, when not nil, signs exactly these lower-case header names
	// (host among them) instead of every header: a verifier recomputes a
	// signature this way.
	SignedHeaders []string
}

// Signer signs requests for one credential, service and region. It is safe
// for concurrent use.
type Signer struct {
	creds   Credentials
	service string
	region  string
	// Now is the clock used by Sign and Authorize; nil means time.Now.
	Now func() time.Time

	key atomic.Pointer[derivedKey]
}

// NewSigner makes a signer. region "" means DefaultRegion.
func NewSigner(creds Credentials, service, region string) (*Signer, error) {
	if !creds.Valid() {
		return nil, errors.New("sigv4: credentials need a key id and a secret")
	}
	if service == "" {
		return nil, errors.New("sigv4: no service to sign for")
	}
	if region == "" {
		region = DefaultRegion
	}
	return &Signer{creds: creds, service: service, region: region}, nil
}

// Service is the service signed for.
func (s *Signer) Service() string { return s.service }

// Region is the region signed for.
func (s *Signer) Region() string { return s.region }

// String names the key id, service and region only.
func (s *Signer) String() string {
	return "sigv4.Signer{KeyID:" + s.creds.KeyID + " Service:" + s.service + " Region:" + s.region + "}"
}

// GoString is String.
func (s *Signer) GoString() string { return s.String() }

// RegionForHost reads the region from an AWS host (any port ignored, any
// case; host may be a URL), in the domain amazonaws.com or, for China,
// amazonaws.com.cn:
//
//   - `<service>.<region>.amazonaws.com` (sqs.eu-west-1.amazonaws.com);
//   - `<region>.queue.amazonaws.com`, SQS's legacy endpoint;
//   - `<endpoint>.<service>.<region>.vpce.amazonaws.com`, a VPC endpoint: the
//     label before vpce.
//
// The label is taken only when it is shaped like a region (regionShape:
// us-east-1, us-gov-west-1, cn-north-1, ap-southeast-3); any other host gives
// DefaultRegion, as AWS's own tools sign for a local emulator.
func RegionForHost(host string) string {
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	var pre string
	for _, domain := range []string{".amazonaws.com", ".amazonaws.com.cn"} {
		if p, ok := strings.CutSuffix(host, domain); ok {
			pre = p
		}
	}
	labels := strings.Split(pre, ".")
	region := ""
	switch n := len(labels); {
	case n >= 3 && labels[n-1] == "vpce":
		region = labels[n-2]
	case n == 2 && labels[1] == "queue":
		region = labels[0]
	case n == 2 && labels[0] != "":
		region = labels[1]
	}
	if !regionShape.MatchString(region) {
		return DefaultRegion
	}
	return region
}

// regionShape is an AWS region's name: a partition-and-area prefix, one or
// more words, a number (eu-west-1, us-gov-west-1, us-isob-east-1,
// cn-northwest-1). It keeps a service's name ("queue", "s3") or an endpoint
// id out.
var regionShape = regexp.MustCompile(`^[a-z]{2,4}(-[a-z]+)+-[0-9]{1,2}$`)

func (s *Signer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Authorize signs req, whose body is body, at the signer's clock time
// (wire.Authenticator).
func (s *Signer) Authorize(req *http.Request, body []byte) error {
	return s.Sign(req, body, s.now())
}

// Sign signs req, whose body is body, at t: it sets X-Amz-Date,
// X-Amz-Security-Token (with a session token) and Authorization, and drops a
// default port from the request's Host.
func (s *Signer) Sign(req *http.Request, body []byte, t time.Time) error {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.h.Reset()
	sc.h.Write(body)
	sum := sc.h.Sum(sc.sum[:0])
	hexEncode(sc.phex[:], sum)
	return s.signHTTP(sc, req, "", sc.phex[:], t)
}

// SignHash signs req at t given the body's hex SHA-256, as Sign does.
func (s *Signer) SignHash(req *http.Request, payloadHash string, t time.Time) error {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	return s.signHTTP(sc, req, payloadHash, nil, t)
}

func (s *Signer) signHTTP(sc *scratch, req *http.Request, payloadStr string, payloadBytes []byte, t time.Time) error {
	if req.URL == nil {
		return errors.New("sigv4: request has no URL")
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if h := stripDefaultPort(req.URL.Scheme, host); h != host || req.Host == "" {
		host = h
		req.Host = h
	}
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	t = t.UTC()
	date := t.AppendFormat(sc.date[:0], TimeFormat)
	setHeader(req.Header, "X-Amz-Date", string(date))
	if tok := s.creds.sessionToken(); tok != "" {
		setHeader(req.Header, "X-Amz-Security-Token", tok)
	}
	r := Request{
		Method:        req.Method,
		Path:          uriPath(req.URL),
		RawQuery:      req.URL.RawQuery,
		Host:          host,
		Header:        req.Header,
		ContentLength: req.ContentLength,
	}
	s.build(sc, &r, payloadStr, payloadBytes, t)
	setHeader(req.Header, "Authorization", string(sc.out))
	return nil
}

// setHeader sets a canonical header key, reusing its slice when it has one.
func setHeader(h http.Header, key, value string) {
	if v := h[key]; len(v) == 1 {
		v[0] = value
		return
	}
	h[key] = []string{value}
}

// Result is everything a signature is made of, for tests and for explaining a
// signature that a service refuses. It holds no secret.
type Result struct {
	CanonicalRequest string
	StringToSign     string
	SignedHeaders    string
	Signature        string
	Authorization    string
}

// Explain signs r at t without touching any request: the headers signed are
// r.Header's as given (plus host), so a test passes X-Amz-Date itself.
func (s *Signer) Explain(r *Request, t time.Time) Result {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	t = t.UTC()
	t.AppendFormat(sc.date[:0], TimeFormat)
	s.build(sc, r, r.PayloadHash, nil, t)
	return Result{
		CanonicalRequest: string(sc.creq),
		StringToSign:     string(sc.sts),
		SignedHeaders:    string(sc.creq[sc.signedStart:sc.signedEnd]),
		Signature:        string(sc.sig[:]),
		Authorization:    string(sc.out),
	}
}

// scratch holds one signing's buffers; pooled so a signature allocates
// nothing but its header strings.
type scratch struct {
	h      hash.Hash
	hu     encoding.BinaryUnmarshaler
	creq   []byte
	sts    []byte
	out    []byte
	ents   []entry
	date   [len(TimeFormat)]byte
	sum    [sha256.Size]byte
	sum2   [sha256.Size]byte
	phex   [2 * sha256.Size]byte
	sig    [2 * sha256.Size]byte
	digits [20]byte

	signedStart, signedEnd int
}

var scratchPool = sync.Pool{New: func() any {
	h := sha256.New()
	return &scratch{
		h:    h,
		hu:   h.(encoding.BinaryUnmarshaler),
		creq: make([]byte, 0, 1024),
		sts:  make([]byte, 0, 256),
		out:  make([]byte, 0, 256),
		ents: make([]entry, 0, 16),
	}
}}

type entryKind uint8

const (
	entryHeader entryKind = iota
	entryHost
	entryLength
)

type entry struct {
	name   string // as in the header map (any case)
	values []string
	kind   entryKind
}

// build writes the canonical request, the string to sign, the signature and
// the Authorization value into sc. sc.date holds X-Amz-Date's text.
func (s *Signer) build(sc *scratch, r *Request, payloadStr string, payloadBytes []byte, t time.Time) {
	// Headers to sign.
	ents := append(sc.ents[:0], entry{name: "host", kind: entryHost})
	if r.SignedHeaders != nil {
		for _, name := range r.SignedHeaders {
			if strings.EqualFold(name, "host") {
				continue
			}
			ents = append(ents, entry{name: name, values: headerValues(r.Header, name)})
		}
	} else {
		hasLength := false
		for k, v := range r.Header {
			if strings.EqualFold(k, "user-agent") || strings.EqualFold(k, "authorization") || strings.EqualFold(k, "host") {
				continue
			}
			if strings.EqualFold(k, "content-length") {
				hasLength = true
			}
			ents = append(ents, entry{name: k, values: v})
		}
		if r.ContentLength > 0 && !hasLength {
			ents = append(ents, entry{name: "content-length", kind: entryLength})
		}
	}
	sortEntries(ents)
	sc.ents = ents

	// Canonical request.
	b := sc.creq[:0]
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	b = append(b, method...)
	b = append(b, '\n')
	b = appendCanonicalURI(b, r.Path)
	b = append(b, '\n')
	b = appendCanonicalQuery(b, r.RawQuery)
	b = append(b, '\n')
	for i := 0; i < len(ents); {
		b = appendLower(b, ents[i].name)
		b = append(b, ':')
		first := true
		j := i
		for ; j < len(ents) && strings.EqualFold(ents[j].name, ents[i].name); j++ {
			switch ents[j].kind {
			case entryHost:
				if !first {
					b = append(b, ',')
				}
				b = appendTrimmed(b, r.Host)
				first = false
			case entryLength:
				if !first {
					b = append(b, ',')
				}
				b = appendInt(b, r.ContentLength, sc.digits[:])
				first = false
			default:
				for _, v := range ents[j].values {
					if !first {
						b = append(b, ',')
					}
					b = appendTrimmed(b, v)
					first = false
				}
			}
		}
		b = append(b, '\n')
		i = j
	}
	b = append(b, '\n')
	sc.signedStart = len(b)
	for i := 0; i < len(ents); i++ {
		if i > 0 && strings.EqualFold(ents[i].name, ents[i-1].name) {
			continue
		}
		if i > 0 {
			b = append(b, ';')
		}
		b = appendLower(b, ents[i].name)
	}
	sc.signedEnd = len(b)
	b = append(b, '\n')
	switch {
	case payloadBytes != nil:
		b = append(b, payloadBytes...)
	case payloadStr != "":
		b = append(b, payloadStr...)
	default:
		b = append(b, EmptyPayloadHash...)
	}
	sc.creq = b

	// String to sign.
	sc.h.Reset()
	sc.h.Write(b)
	creqSum := sc.h.Sum(sc.sum[:0])
	st := append(sc.sts[:0], Algorithm...)
	st = append(st, '\n')
	st = append(st, sc.date[:]...)
	st = append(st, '\n')
	scopeStart := len(st)
	st = append(st, sc.date[:8]...)
	st = append(st, '/')
	st = append(st, s.region...)
	st = append(st, '/')
	st = append(st, s.service...)
	st = append(st, "/aws4_request"...)
	scopeEnd := len(st)
	st = append(st, '\n')
	st = appendHex(st, creqSum)
	sc.sts = st

	// Signature: HMAC-SHA256 with the day's key, from its saved pad states.
	k := s.signingKey(t, sc.date[:8])
	sc.hu.UnmarshalBinary(k.inner)
	sc.h.Write(st)
	inner := sc.h.Sum(sc.sum[:0])
	sc.hu.UnmarshalBinary(k.outer)
	sc.h.Write(inner)
	mac := sc.h.Sum(sc.sum2[:0])
	hexEncode(sc.sig[:], mac)

	// Authorization.
	o := append(sc.out[:0], Algorithm...)
	o = append(o, " Credential="...)
	o = append(o, s.creds.KeyID...)
	o = append(o, '/')
	o = append(o, st[scopeStart:scopeEnd]...)
	o = append(o, ", SignedHeaders="...)
	o = append(o, b[sc.signedStart:sc.signedEnd]...)
	o = append(o, ", Signature="...)
	o = append(o, sc.sig[:]...)
	sc.out = o
}

// derivedKey is the day's signing key as HMAC-SHA256 pad states.
type derivedKey struct {
	date         [8]byte
	inner, outer []byte
}

func (s *Signer) signingKey(t time.Time, date []byte) *derivedKey {
	if k := s.key.Load(); k != nil && string(k.date[:]) == string(date) {
		return k
	}
	mac := func(key []byte, data string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(data))
		return m.Sum(nil)
	}
	kDate := mac([]byte("AWS4"+s.creds.secret()), string(date))
	kRegion := mac(kDate, s.region)
	kService := mac(kRegion, s.service)
	kSigning := mac(kService, "aws4_request")
	k := &derivedKey{inner: padState(kSigning, 0x36), outer: padState(kSigning, 0x5c)}
	copy(k.date[:], date)
	s.key.Store(k)
	return k
}

// padState is the SHA-256 state after one block of key XOR pad.
func padState(key []byte, pad byte) []byte {
	var block [sha256.BlockSize]byte
	copy(block[:], key)
	for i := range block {
		block[i] ^= pad
	}
	h := sha256.New()
	h.Write(block[:])
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		panic("sigv4: sha256 state: " + err.Error())
	}
	return state
}

func headerValues(h http.Header, lowerName string) []string {
	if v, ok := h[http.CanonicalHeaderKey(lowerName)]; ok {
		return v
	}
	if v, ok := h[lowerName]; ok {
		return v
	}
	for k, v := range h {
		if strings.EqualFold(k, lowerName) {
			return v
		}
	}
	return nil
}

// sortEntries sorts by lower-case name (ties by the name as given, so merged
// values come in a fixed order); insertion sort, as there are few headers.
func sortEntries(e []entry) {
	for i := 1; i < len(e); i++ {
		for j := i; j > 0 && lessEntry(&e[j], &e[j-1]); j-- {
			e[j], e[j-1] = e[j-1], e[j]
		}
	}
}

func lessEntry(a, b *entry) bool {
	if c := compareFold(a.name, b.name); c != 0 {
		return c < 0
	}
	if a.kind != b.kind {
		return a.kind > b.kind // host and content-length first
	}
	return a.name < b.name
}

func compareFold(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ca, cb := lower(a[i]), lower(b[i])
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		b = append(b, lower(s[i]))
	}
	return b
}

// appendTrimmed writes v without leading and trailing white space and with
// each inner run of spaces folded to one.
func appendTrimmed(b []byte, v string) []byte {
	v = strings.TrimSpace(v)
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == ' ' && i > 0 && v[i-1] == ' ' {
			continue
		}
		b = append(b, c)
	}
	return b
}

func appendInt(b []byte, n int64, tmp []byte) []byte {
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

const lowerHex = "0123456789abcdef"
const upperHex = "0123456789ABCDEF"

func hexEncode(dst, src []byte) {
	for i, c := range src {
		dst[2*i] = lowerHex[c>>4]
		dst[2*i+1] = lowerHex[c&0xf]
	}
}

func appendHex(b, src []byte) []byte {
	for _, c := range src {
		b = append(b, lowerHex[c>>4], lowerHex[c&0xf])
	}
	return b
}

var unreserved = func() (t [256]bool) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	t['-'], t['_'], t['.'], t['~'] = true, true, true, true
	return t
}()

func appendEscaped(b []byte, s string, keepSlash bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved[c] || (keepSlash && c == '/') {
			b = append(b, c)
		} else {
			b = append(b, '%', upperHex[c>>4], upperHex[c&0xf])
		}
	}
	return b
}

// appendCanonicalURI writes the canonical path: dot and empty segments
// removed, then every byte but unreserved ones and '/' percent-encoded.
func appendCanonicalURI(b []byte, path string) []byte {
	if path == "" || path == "/" {
		return append(b, '/')
	}
	if path[0] != '/' || needsNormalizing(path) {
		path = normalizePath(path)
	}
	return appendEscaped(b, path, true)
}

func needsNormalizing(p string) bool {
	if strings.Contains(p, "//") {
		return true
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// normalizePath removes empty, "." and ".." segments; a path that ended on a
// slash or a dot segment keeps a trailing slash.
func normalizePath(p string) string {
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	trailing := false
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, s)
			continue
		}
		if last && i > 0 {
			trailing = true
		}
	}
	r := "/" + strings.Join(out, "/")
	if trailing && len(out) > 0 {
		r += "/"
	}
	return r
}

// appendCanonicalQuery writes the query's pairs decoded (as url.ParseQuery
// decodes them, '+' as a space; a pair that does not decode, or holds ';', is
// dropped as ParseQuery drops it), re-encoded and sorted by name then value.
func appendCanonicalQuery(b []byte, raw string) []byte {
	if raw == "" {
		return b
	}
	type pair struct{ k, v string }
	var pairs []pair
	for raw != "" {
		var seg string
		seg, raw, _ = strings.Cut(raw, "&")
		if seg == "" || strings.Contains(seg, ";") {
			continue
		}
		k, v, _ := strings.Cut(seg, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			continue
		}
		pairs = append(pairs, pair{
			k: string(appendEscaped(nil, k, false)),
			v: string(appendEscaped(nil, v, false)),
		})
	}
	slices.SortFunc(pairs, func(a, c pair) int {
		if r := strings.Compare(a.k, c.k); r != 0 {
			return r
		}
		return strings.Compare(a.v, c.v)
	})
	for i, p := range pairs {
		if i > 0 {
			b = append(b, '&')
		}
		b = append(b, p.k...)
		b = append(b, '=')
		b = append(b, p.v...)
	}
	return b
}

// uriPath is the path as the request sends it (aws-sdk-go-v2's GetURIPath).
func uriPath(u *url.URL) string {
	if u.Opaque != "" {
		o := u.Opaque
		if i := strings.IndexByte(o, '?'); i >= 0 {
			o = o[:i]
		}
		o = strings.TrimPrefix(o, "//")
		if i := strings.IndexByte(o, '/'); i >= 0 {
			return o[i:]
		}
		return "/"
	}
	p := u.EscapedPath()
	if p == "" {
		return "/"
	}
	return p
}

func stripDefaultPort(scheme, host string) string {
	i := strings.LastIndexByte(host, ':')
	if i < 0 || strings.Contains(host[i:], "]") {
		return host
	}
	port := host[i+1:]
	s := strings.ToLower(scheme)
	if port == "" || (s == "http" && port == "80") || (s == "https" && port == "443") {
		return host[:i] // an IPv6 literal keeps its brackets
	}
	return host
}
