// Package ast is the syntax tree of a .jadpo file. The struct tags are the
// grammar (participle/v2 reads them, from lang/parser/grammar.go, a copy of
// these types generated from this file); the parser knows shapes only, never
// rules: which keys a block may hold, what a name refers to and whether a
// value fits are the checker's business.
//
// Every node keeps the byte range it was parsed from, so it is always at
// hand for a diagnostic.
package ast

import (
	"github.com/alecthomas/participle/v2"
	plexer "github.com/alecthomas/participle/v2/lexer"

	"github.com/jadpo/jadpo/lang/lexer"
	"github.com/jadpo/jadpo/lang/source"
)

// Node carries a node's byte range, and nothing else: 8 bytes. On the
// parser's slow path participle builds lang/parser's copy of these types,
// whose nodes hold their tokens, and the parser turns that into this tree,
// keeping each node's range (lang/parser/grammar.go, generated from this
// file). So a tree holds no tokens: at 64 bytes a token they were most of
// a check's memory, and the tokens field's slice header alone 24 bytes of
// every node.
type Node struct {
	// SpanStart and SpanEnd are the range; int32 is ample under the
	// per-file size limit.
	SpanStart, SpanEnd int32
}

// Span is the byte range from the node's first token to the end of its last.
func (n Node) Span() source.Span {
	return source.Span{Start: int(n.SpanStart), End: int(n.SpanEnd)}
}

// SpanOf is the node of tokens' range (none: an empty range).
func SpanOf(toks []plexer.Token) Node {
	if len(toks) == 0 {
		return Node{}
	}
	last := toks[len(toks)-1]
	return Node{SpanStart: int32(toks[0].Pos.Offset), SpanEnd: int32(last.Pos.Offset + len(last.Value))}
}

// File is one parsed .jadpo file.
type File struct {
	Source *source.File
	Decls  []*Decl
	// Unparsed counts the declarations (`use` lines aside) left out for a
	// syntax error, so that a summary counts the file's declarations.
	Unparsed int
	// Failed says what each declaration left out for a syntax error
	// declared, as far as its tokens tell: the checker knows these names
	// so that their uses are not reported as unknown too.
	Failed []FailedDecl
	// FieldsDeferred says the parse left every record's fields out of this
	// tree (lang/parser's ParseFileLean, for a check): each Record's Fields
	// is nil, and a parser.FieldReader reads them from the file when asked.
	FieldsDeferred bool
}

// FailedDecl is what a declaration that did not parse would have declared:
// its keyword as written (`event`, or a misspelling such as `evnt`) and
// its name; for a `use` line, the names between its braces.
type FailedDecl struct {
	Keyword string
	Names   []string
}

// Range is a span of this file as a diagnostic's range.
func (f *File) Range(s source.Span) source.Range { return source.Range{File: f.Source, Span: s} }

// Decl is one top-level declaration; exactly one field is set.
type Decl struct {
	Node
	Use        *Use        `parser:"  @@"`
	Package    *Package    `parser:"| @@"`
	Provider   *Provider   `parser:"| @@"`
	Settings   *Settings   `parser:"| @@"`
	Resource   *Resource   `parser:"| @@"`
	Subscriber *Subscriber `parser:"| @@"`
	Named      *Named      `parser:"| @@"`
}

// Use brings public names of another module into this file:
// use stock/events { OrderShipped, OrderCancelled }
type Use struct {
	Node
	Path  *ModulePath `parser:"'use' @@"`
	Names []*Ident    `parser:"'{' ( @@ ( ',' @@ )* ','? )? '}'"`
}

// ModulePath is a module's file path without .jadpo: stock/events.
type ModulePath struct {
	Node
	Parts []string `parser:"@Ident ( '/' @Ident )*"`
}

// Named is a declaration that may be public: a type, enum, value, event,
// config, store, connection, queue or capability mapping.
type Named struct {
	Node
	Public    bool       `parser:"@'public'?"`
	Type      *TypeDecl  `parser:"( @@"`
	Enum      *Enum      `parser:"| @@"`
	Record    *Record    `parser:"| @@"`
	Config    *Config    `parser:"| @@"`
	BlockDecl *BlockDecl `parser:"| @@ )"`
}

// TypeDecl is a scalar type: type Quantity = Int { min: 1 max: 1000 }
type TypeDecl struct {
	Node
	Name  *Ident    `parser:"'type' @@ '='"`
	Base  *TypeExpr `parser:"@@"`
	Rules *Block    `parser:"@@?"`
}

// Enum is a closed set of variants: enum Carrier { dhl ups }
type Enum struct {
	Node
	Name     *Ident   `parser:"'enum' @@ '{'"`
	Variants []*Ident `parser:"@@* '}'"`
}

// Record is a `value` or an `event`: a closed set of fields.
type Record struct {
	Node
	Kind   string   `parser:"@( 'value' | 'event' )"`
	Name   *Ident   `parser:"@@"`
	Fields []*Field `parser:"'{' @@* '}'"`
}

// IsEvent reports whether the record is an event.
func (r *Record) IsEvent() bool { return r.Kind == "event" }

// Config is the app's config declaration.
type Config struct {
	Node
	Name   *Ident   `parser:"'config' @@"`
	Fields []*Field `parser:"'{' @@* '}'"`
}

// BlockDecl is a named declaration whose body is a block of members:
// store, connection, queue, and a package's `provide <capability>`.
type BlockDecl struct {
	Node
	Kind string `parser:"@( 'store' | 'connection' | 'queue' | 'provide' )"`
	Name *Ident `parser:"@@"`
	Body *Block `parser:"@@"`
}

// Subscriber hands events to handlers: subscriber pack_order { on ... retry: {...} }
type Subscriber struct {
	Node
	// Public is set for `public subscriber`: it changes nothing (every
	// subscriber is app-wide), and the checker warns of it.
	Public bool              `parser:"@'public'?"`
	Name   *Ident            `parser:"'subscriber' @@ '{'"`
	Items  []*SubscriberItem `parser:"@@* '}'"`
}

// SubscriberItem is a handler or a member such as retry:.
type SubscriberItem struct {
	Node
	Handler *Handler `parser:"  @@"`
	Member  *Member  `parser:"| @@"`
}

// Handler runs once per delivery: on OrderShipped(shipment) { attempt ... }
type Handler struct {
	Node
	Event   *QualName  `parser:"'on' @@"`
	Binding *Ident     `parser:"'(' @@ ')'"`
	Steps   []*Attempt `parser:"'{' @@* '}'"`
}

// Attempt calls an operation: attempt packing.jobs.create_job(order_id: x)
type Attempt struct {
	Node
	Call *Expr `parser:"'attempt' @@"`
}

// Package is a package file's header: package AmazonSqs.v2012_11_05
type Package struct {
	Node
	Name *QualName `parser:"'package' @@"`
}

// Provider describes how a package talks to its service.
type Provider struct {
	Node
	Body *Block `parser:"'provider' @@"`
}

// Settings declares a package's settings, as fields.
type Settings struct {
	Node
	Fields []*Field `parser:"'settings' '{' @@* '}'"`
}

// Resource groups a package's operations.
type Resource struct {
	Node
	Name       *Ident       `parser:"'resource' @@ '{'"`
	Operations []*Operation `parser:"@@* '}'"`
}

// Operation is one call a package's service answers.
type Operation struct {
	Node
	Name *Ident `parser:"'operation' @@"`
	Body *Block `parser:"@@"`
}

// Field is `name: Type { options }` in a value, event, config or settings.
// Its name and type are held by value, not by pointer: a record's fields
// are most of a tree, and a field cut in one piece with the first part of
// its type's name is 136 bytes and 5 pointers, where its five nodes were
// 168 bytes and 9 pointers.
type Field struct {
	Node
	Name    Ident    `parser:"@@ ':'"`
	Type    TypeExpr `parser:"@@"`
	Options *Block   `parser:"@@?"`
}

// TypeExpr is a type reference: Sku, Billing.Money, List<OrderLine>, Text?
// Its name is held by value.
type TypeExpr struct {
	Node
	Name     QualName    `parser:"@@"`
	Args     []*TypeExpr `parser:"( '<' @@ ( ',' @@ )* '>' )?"`
	Optional bool        `parser:"@'?'?"`
}

// Block is `{ member member ... }`.
type Block struct {
	Node
	Members []*Member `parser:"'{' @@* '}'"`
}

// Member is `key: value`, or an entry naming something with an optional
// block, as a queue's events are listed: OrderShipped { wire_name: "x" }.
type Member struct {
	Node
	Key       *Ident    `parser:"( @@ ':'"`
	Value     *Expr     `parser:"  @@ )"`
	Entry     *QualName `parser:"| ( @@"`
	EntryBody *Block    `parser:"  @@? )"`
}

// Expr is a value: a literal, a reference or call, a list or a record.
type Expr struct {
	Node
	Text     *string `parser:"  @String"`
	Duration *string `parser:"| @Duration"`
	Number   *string `parser:"| @Number"`
	List     *List   `parser:"| @@"`
	Record   *Block  `parser:"| @@"`
	Ref      *Ref    `parser:"| @@"`
}

// List is [e, e].
type List struct {
	Node
	Items []*Expr `parser:"'[' ( @@ ( ',' @@ )* ','? )? ']'"`
}

// Ref is a dotted name, called when arguments follow: config.sqs_host,
// Protocol.aws_json, true, none, json(shipment), jobs.create_job(id: x).
type Ref struct {
	Node
	Path *QualName `parser:"@@"`
	Call *Args     `parser:"( '(' @@ ')' )?"`
}

// Args are a call's arguments, named or not, commas optional.
type Args struct {
	Node
	Items []*Arg `parser:"( @@ ( ','? @@ )* ','? )?"`
}

// Arg is `name: value` or a bare value.
type Arg struct {
	Node
	Name  *Ident `parser:"( @@ ':' )?"`
	Value *Expr  `parser:"@@"`
}

// QualName is a dotted name: Billing.InvoicePaid, shipment.order_id. Its
// parts are held by value (a name of one part is one run with it).
type QualName struct {
	Node
	Parts []Ident `parser:"@@ ( '.' @@ )*"`
}

// String joins the parts with dots.
func (q *QualName) String() string {
	if q == nil {
		return ""
	}
	if len(q.Parts) == 1 {
		return q.Parts[0].Name
	}
	n := 0
	for _, p := range q.Parts {
		n += len(p.Name) + 1
	}
	b := make([]byte, 0, n)
	for i, p := range q.Parts {
		if i > 0 {
			b = append(b, '.')
		}
		b = append(b, p.Name...)
	}
	return string(b)
}

// Ident is one identifier with its range: where it starts, and its name's
// length. Identifiers are half the nodes of a tree; without a Node (and
// its tokens field) each is 24 bytes instead of 48. Participle parses it
// through Parse.
type Ident struct {
	Start int32
	Name  string
}

// Span is the identifier's byte range.
func (i Ident) Span() source.Span {
	return source.Span{Start: int(i.Start), End: int(i.Start) + len(i.Name)}
}

// Parse takes one identifier token, as `@Ident` would (participle.Parseable).
func (i *Ident) Parse(lex *plexer.PeekingLexer) error {
	t := lex.Peek()
	if t.Type != lexer.Ident {
		return participle.NextMatch
	}
	lex.Next()
	i.Start, i.Name = int32(t.Pos.Offset), t.Value
	return nil
}

// TextValue is a text literal's value, unquoted.
func (e *Expr) TextValue() string {
	if e == nil || e.Text == nil {
		return ""
	}
	return lexer.Unquote(*e.Text)
}

// Get returns the member of the block with the given key, or nil.
func (b *Block) Get(key string) *Member {
	if b == nil {
		return nil
	}
	for _, m := range b.Members {
		if m.Key != nil && m.Key.Name == key {
			return m
		}
	}
	return nil
}

// Name of the declaration, or "" for those without one (use, provider, settings, package).
func (d *Decl) Name() *Ident {
	switch {
	case d.Resource != nil:
		return d.Resource.Name
	case d.Subscriber != nil:
		return d.Subscriber.Name
	case d.Named != nil:
		n := d.Named
		switch {
		case n.Type != nil:
			return n.Type.Name
		case n.Enum != nil:
			return n.Enum.Name
		case n.Record != nil:
			return n.Record.Name
		case n.Config != nil:
			return n.Config.Name
		case n.BlockDecl != nil:
			return n.BlockDecl.Name
		}
	}
	return nil
}
