// Package providers assembles a wire.Client for a connection from its
// package's provider block: the protocol (providers/awsjson,
// providers/jsonhttp) and the credential scheme (providers/sigv4,
// providers/bearer); and opens a queue's Source (providers/queue) with the
// driver the plan names (OpenQueue). The runtime calls only this package,
// providers/wire and providers/queue.
//
// Subpackages: wire (the neutral API of calls), queue (the neutral API of
// queues), the queue drivers receiving (a package's mapping), cfqueues
// (Cloudflare Queues) and sqlinbox (a SQL table), awsjson, jsonhttp, sigv4,
// bearer, catalog (the packages built into the toolchain), and under fakes/
// the stand-ins sqsfake, cfqueuesfake and emailfake (for tests and `jadpo
// dev`), kept apart from the wire code they stand in for.
//
// The names of protocols, credential schemes and drivers are the plan's
// (check/ir): providers import ir for them, and for the plan's receiving
// mapping a driver is built from, because ir is plain data that imports
// nothing of the checker; so each name is written once.
package providers

import (
	"fmt"
	"net/http"
	"slices"
	"sort"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/awsjson"
	"github.com/jadpo/jadpo/providers/bearer"
	"github.com/jadpo/jadpo/providers/jsonhttp"
	"github.com/jadpo/jadpo/providers/sigv4"
	"github.com/jadpo/jadpo/providers/wire"
)

// SecretMembers lists the credential members of scheme that hold secrets.
func SecretMembers(scheme ir.CredentialScheme) []string {
	var out []string
	for _, m := range scheme.Members() {
		if m.Secret {
			out = append(out, m.Name)
		}
	}
	return out
}

// Parts builds the protocol and the authenticator of a connection.
//
// host is the connection's `host:` ("" means the provider's fixed Host);
// credentials are the credential members' values (key_id, secret,
// session_token for aws_sigv4; token for bearer); settings are the
// connection's settings as text (json_http fills path placeholders with
// them). Errors name members, never their values.
func Parts(p ir.Provider, host string, credentials, settings map[string]string) (wire.Protocol, wire.Authenticator, error) {
	if host == "" {
		host = p.Host
	}
	if host == "" {
		return nil, nil, fmt.Errorf("the connection needs a host: the package has no fixed host")
	}
	if _, ok := schemes[p.Credential]; !p.Credential.Known() || (p.Credential != "" && !ok) {
		return nil, nil, fmt.Errorf("unknown credential scheme %q", p.Credential)
	}
	members := p.Credential.Members()
	for _, m := range members {
		if m.Required && credentials[m.Name] == "" {
			return nil, nil, fmt.Errorf("credential scheme %s needs credential member %q", p.Credential, m.Name)
		}
	}
	keys := make([]string, 0, len(credentials))
	for k := range credentials {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.ContainsFunc(members, func(m ir.CredentialMember) bool { return m.Name == k }) {
			return nil, nil, fmt.Errorf("credential scheme %q takes no credential member %q", p.Credential, k)
		}
	}

	newProto, ok := protocols[p.Protocol]
	if !ok {
		return nil, nil, fmt.Errorf("unknown protocol %q", p.Protocol)
	}
	proto, err := newProto(p, host, settings)
	if err != nil {
		return nil, nil, err
	}

	var auth wire.Authenticator
	if p.Credential != "" {
		a, err := schemes[p.Credential](p, host, credentials)
		if err != nil {
			return nil, nil, err
		}
		auth = a
	}
	return proto, auth, nil
}

// protocols build the wire protocol of each protocol a service is called
// over: a protocol is one entry here and its name in check/ir. A
// connection whose protocol is none of these (a SQL database, a broker) is
// reached by its queue driver itself (WireProtocol).
var protocols = map[ir.Protocol]func(p ir.Provider, host string, settings map[string]string) (wire.Protocol, error){
	ir.ProtocolAWSJSON: func(p ir.Provider, host string, _ map[string]string) (wire.Protocol, error) {
		return awsjson.New(p.AWSTarget, host, p.ErrorCode)
	},
	ir.ProtocolJSONHTTP: func(p ir.Provider, host string, settings map[string]string) (wire.Protocol, error) {
		return jsonhttp.New(host, settings, p.ErrorCode)
	},
}

// WireProtocol reports whether connections of protocol p are called through
// a wire.Client (NewClient); false for one its queue driver reaches itself.
func WireProtocol(p ir.Protocol) bool {
	_, ok := protocols[p]
	return ok
}

// schemes build the authenticator of each credential scheme a service's
// requests are signed with, from the credential members' values (checked
// against ir's members of the scheme). A scheme is one entry here and one
// in check/ir's; database_url's connections are opened by their driver.
var schemes = map[ir.CredentialScheme]func(p ir.Provider, host string, credentials map[string]string) (wire.Authenticator, error){
	ir.CredentialAWSSigV4: func(p ir.Provider, host string, credentials map[string]string) (wire.Authenticator, error) {
		if p.AWSService == "" {
			return nil, fmt.Errorf("aws_sigv4 needs `aws: { service: }`")
		}
		creds := sigv4.NewCredentials(credentials[ir.MemberKeyID], credentials[ir.MemberSecret], credentials[ir.MemberSessionToken])
		return sigv4.NewSigner(creds, p.AWSService, sigv4.RegionForHost(host))
	},
	ir.CredentialBearer: func(_ ir.Provider, _ string, credentials map[string]string) (wire.Authenticator, error) {
		return bearer.New(credentials[ir.MemberToken])
	},
}

// NewClient builds the client of a connection (see Parts), sending with hc
// (nil: a client with a 60 s timeout). Transport failures of retry-safe
// operations are tried 3 times in all. credentialFields are the config
// fields the credential is read from (names only), which a refusal of the
// credential names (wire.Refusal.Credential); nil when not known.
func NewClient(p ir.Provider, host string, credentials, settings map[string]string, hc *http.Client, credentialFields []string) (*wire.Client, error) {
	proto, auth, err := Parts(p, host, credentials, settings)
	if err != nil {
		return nil, err
	}
	hint := wire.CredentialHint{Fields: credentialFields, SigV4: p.Credential == ir.CredentialAWSSigV4}
	return wire.NewClient(wire.Config{Protocol: proto, Auth: auth, HTTP: hc, Credential: hint})
}
