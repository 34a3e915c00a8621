// What the undici vendor file gets for `require('node:http2')` (scripts/build.mjs).
//
// undici reads ten HTTP/2 constants when its client module loads, and calls http2.connect() only
// for a server that negotiates HTTP/2 over TLS with allowH2 set, which this CLI never sets.
// Loading node:http2 eagerly pulls in tls and crypto with it: 11-15 ms of every batch's start-up
// on the 2-core box (docs/performance.md, "Fifth pass"). The constants are fixed by the protocol
// (RFC 9113, RFC 8441); test/build/lazy-http2.test.ts holds them to node's own.
'use strict';

module.exports = {
  constants: {
    HTTP2_HEADER_AUTHORITY: ':authority',
    HTTP2_HEADER_METHOD: ':method',
    HTTP2_HEADER_PATH: ':path',
    HTTP2_HEADER_SCHEME: ':scheme',
    HTTP2_HEADER_CONTENT_LENGTH: 'content-length',
    HTTP2_HEADER_EXPECT: 'expect',
    HTTP2_HEADER_STATUS: ':status',
    HTTP2_HEADER_PROTOCOL: ':protocol',
    NGHTTP2_REFUSED_STREAM: 7,
    NGHTTP2_CANCEL: 8,
  },
  connect: (...args) => require('node:http2').connect(...args),
};
