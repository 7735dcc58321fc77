#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Generates probectl's netlink code from Documentation/netlink/probectl.yaml.

Outputs (all committed, so neither build needs Python):
  kmod/uapi/probectl.h           the protocol header both sides include: limits,
                                 commands, attributes, enums, flags, structs,
                                 with the spec's doc: texts as comments
  kmod/nl_gen.h, kmod/nl_gen.c   per-command nla_policy arrays, the genl_ops
                                 table and the handler prototypes it names, and
                                 the probe counters (attribute, info member)
  libctl/src/netlink/attrs_gen.hpp  attribute tables of the replies libctl decodes
  libctl/include/probectl/counters.hpp  the probe counters as X-macros, which
                                 ProbeInfo, ProbeStats, the summary and list
                                 columns and the JSON keys expand

Besides the kernel's genetlink-legacy keys, attribute checks take:
  max-len, exact-len, min, max: an integer or an expression over definitions
      ("symbol-max - 1", "filter-max-insns * sizeof(filter-insn)");
  mask: [entry, ...]: the flags a request may set (a subset of the enum);
  flags-mask: ENUM: every flag of a flags definition.
An attribute with "counter: true" is a probe counter (u64, summed over CPUs).
The top-level "counters:" list orders them (and libctl's own) for display.
Definitions: an enum's "enum-cnt-name" adds its count entry without the max
define of "render-max"; "value-start" numbers the first entry; a flags
definition with an empty "enum-name" becomes defines; a struct member's "len"
(a number or a const) makes it an array of that many of its type (u8 for binary,
char for string).

Usage: tools/nlgen.py [--check] [--top DIR]
  --check: write nothing, exit 1 if a committed file differs from what the spec gives;
  --top: the tree to read the spec from and write to (default: this script's).
"""
import os
import re
import subprocess
import sys
import textwrap

import yaml

HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = HOME
SPEC = 'Documentation/netlink/probectl.yaml'
MARK = 'generated from %s by tools/nlgen.py -- do not edit' % SPEC

# libctl: the struct each decoded reply fills; members are named after the
# attribute without its "probe-" prefix.
CXX_REPLIES = {'probe-get': 'ProbeInfo', 'probe-add': 'AddedProbe', 'aggr-get': 'AggrReply',
               'stack-get': 'StackReply', 'maps-get': 'MapsReply',
               'session-get': 'SessionReply'}

POLICY_TYPES = {'u8': 'NLA_U8', 'u16': 'NLA_U16', 'u32': 'NLA_U32', 'u64': 'NLA_U64',
                's32': 'NLA_S32', 's64': 'NLA_S64', 'string': 'NLA_NUL_STRING',
                'binary': 'NLA_BINARY', 'flag': 'NLA_FLAG'}
CXX_TYPES = {'u32': 'U32', 'u64': 'U64', 'string': 'String', 'binary': 'Binary'}


def c_name(*parts):
    return '_'.join(p.strip('-').upper().replace('-', '_') for p in parts if p)


class Spec:
    def __init__(self, path):
        with open(path) as f:
            self.y = yaml.safe_load(f)
        self.defs = {d['name']: d for d in self.y['definitions']}
        aset = self.y['attribute-sets'][0]
        self.attr_prefix = aset['name-prefix']
        self.attrs = {a['name']: a for a in aset['attributes']}
        self.ops = self.y['operations']['list']
        self.op_prefix = self.y['operations']['name-prefix']

    def attr_c(self, name):
        if name not in self.attrs:
            sys.exit('nlgen: unknown attribute %s' % name)
        return c_name(self.attr_prefix, name)

    def attr_c_max(self):
        return c_name(self.attr_prefix, 'max')

    def cmd_c(self, op):
        return c_name(self.op_prefix, op['name'])

    def const_c(self, name):
        d = self.defs.get(name)
        if d and d['type'] == 'const':
            return c_name('probectl', name)
        if d and d['type'] == 'struct':
            return None
        if name.endswith('-max'):
            e = self.defs.get(name[:-4])
            if e and e['type'] == 'enum' and e.get('render-max'):
                return c_name(e['name-prefix'], 'max')
        sys.exit('nlgen: %s names no constant' % name)

    def expr(self, v):
        """A check value as C: integers as they are, names as their defines."""
        if isinstance(v, int):
            return str(v)

        def word(m):
            if m.group(1):
                d = self.defs.get(m.group(1))
                if not d or d['type'] != 'struct':
                    sys.exit('nlgen: sizeof(%s) is not a struct' % m.group(1))
                return 'sizeof(struct %s)' % c_name('probectl', m.group(1)).lower()
            return self.const_c(m.group(2))
        return re.sub(r'sizeof\(([a-z0-9-]+)\)|\b([a-z][a-z0-9-]*[a-z0-9])\b', word, v)

    def flags_c(self, enum, entries):
        d = self.defs[enum]
        known = [e['name'] if isinstance(e, dict) else e for e in d['entries']]
        for e in entries:
            if e not in known:
                sys.exit('nlgen: %s is not a flag of %s' % (e, enum))
        return ' | '.join(c_name(d['name-prefix'], e) for e in entries)

    def policy_entry(self, name):
        a = self.attrs[name]
        t = POLICY_TYPES[a['type']]
        ck = a.get('checks', {})
        if 'mask' in ck or 'flags-mask' in ck:
            if 'mask' in ck:
                mask = self.flags_c(a['enum'], ck['mask'])
            else:
                d = self.defs[ck['flags-mask']]
                mask = self.flags_c(d['name'], [e['name'] if isinstance(e, dict) else e
                                                for e in d['entries']])
            return 'NLA_POLICY_MASK(%s, %s)' % (t, mask)
        if 'min' in ck and 'max' in ck:
            return 'NLA_POLICY_RANGE(%s, %s, %s)' % (t, self.expr(ck['min']),
                                                     self.expr(ck['max']))
        if 'max' in ck:
            return 'NLA_POLICY_MAX(%s, %s)' % (t, self.expr(ck['max']))
        if 'min' in ck:
            return 'NLA_POLICY_MIN(%s, %s)' % (t, self.expr(ck['min']))
        if 'exact-len' in ck:
            return 'NLA_POLICY_EXACT_LEN(%s)' % self.expr(ck['exact-len'])
        if 'max-len' in ck:
            return '{ .type = %s, .len = %s, }' % (t, self.expr(ck['max-len']))
        return '{ .type = %s, }' % t

    def counters(self):
        return [n for n, a in self.attrs.items() if a.get('counter')]


def wrap(line, indent='\t\t'):
    """Breaks a line over 100 columns (checkpatch) at its last operator or comma that fits."""
    out = []
    while len(line.expandtabs(8)) > 100:
        cut = max(line.rfind(sep, 0, 100 - 16) + len(sep.rstrip())
                  for sep in (', ', ' * ', ' | '))
        out.append(line[:cut])
        line = indent + line[cut:].lstrip()
    return '\n'.join(out + [line])


def request_attrs(sub):
    return (sub or {}).get('request', {}).get('attributes', []) or []


def policy_name(op, mode):
    return 'probectl_%s_%s_nl_policy' % (op['name'].replace('-', '_'), mode)


def handler(op, mode):
    return 'probectl_nl_%s_%s' % (op['name'].replace('-', '_'), mode)


def kernel_c(s):
    out = ['// SPDX-License-Identifier: GPL-2.0',
           '/* %s */' % MARK, '',
           '#include <net/genetlink.h>', '#include <net/netlink.h>', '',
           '#include "probectl.h"',
           '#include "nl_gen.h"']
    ops = []
    no_request = False
    for op in s.ops:
        for mode, sub in (('doit', op.get('do')), ('dumpit', op.get('dump'))):
            if sub is None:
                continue
            names = request_attrs(sub)
            if not names:
                # An op without request attributes still gets a policy of its own that
                # refuses every attribute: left without one, some kernels (7.2) pair the
                # one-entry reject-all policy with the family's maxattr and read past it.
                pol, top_c = 'probectl_no_request_nl_policy', s.attr_c_max()
                if not no_request:
                    no_request = True
                    out += ['', 'static const struct nla_policy %s[%s + 1] = {' % (pol, top_c),
                            '\t[0 ... %s] = { .type = NLA_REJECT, },' % top_c, '};']
                ops.append((op, mode, sub, pol, top_c))
                continue
            pol = policy_name(op, 'do' if mode == 'doit' else 'dump')
            top = max(names, key=lambda n: list(s.attrs).index(n))
            out += ['', 'static const struct nla_policy %s[%s + 1] = {' % (pol, s.attr_c(top))]
            for n in sorted(names, key=lambda n: list(s.attrs).index(n)):
                out.append(wrap('\t[%s] = %s,' % (s.attr_c(n), s.policy_entry(n))))
            out.append('};')
            ops.append((op, mode, sub, pol, s.attr_c(top)))
    out += ['', '/* Sorted by command; every op refuses the attributes it does not take. */',
            'const struct genl_ops probectl_nl_ops[PROBECTL_NL_N_OPS] = {']
    for op, mode, sub, pol, top in ops:
        out += ['\t{', '\t\t.cmd\t\t= %s,' % s.cmd_c(op)]
        if mode == 'dumpit' and sub.get('pre'):
            out.append('\t\t.start\t\t= %s,' % sub['pre'].replace('-', '_'))
        out.append('\t\t.%s\t\t= %s,' % (mode, handler(op, mode)))
        if mode == 'dumpit' and sub.get('post'):
            out.append('\t\t.done\t\t= %s,' % sub['post'].replace('-', '_'))
        if pol:
            out += ['\t\t.policy\t\t= %s,' % pol, '\t\t.maxattr\t= %s,' % top]
        out.append('\t},')
    out.append('};')
    out += ['', '/* PROBE_GET order; members of struct probectl_probe_info. */',
            'const struct probectl_nl_counter probectl_nl_counters[PROBECTL_NL_N_COUNTERS] = {']
    for n in s.counters():
        if s.attrs[n]['type'] != 'u64':
            sys.exit('nlgen: counter %s is not u64' % n)
        out.append('\t{ %s, offsetof(struct probectl_probe_info, %s) },'
                   % (s.attr_c(n), n.removeprefix('probe-').replace('-', '_')))
    out.append('};')
    return '\n'.join(out) + '\n', ops


def kernel_h(s, ops):
    out = ['/* SPDX-License-Identifier: GPL-2.0 */',
           '/* %s */' % MARK,
           '#ifndef PROBECTL_NL_GEN_H', '#define PROBECTL_NL_GEN_H', '',
           '#include <net/genetlink.h>', '',
           '#include "uapi/probectl.h"', '',
           '#define PROBECTL_NL_N_OPS %d' % len(ops),
           'extern const struct genl_ops probectl_nl_ops[PROBECTL_NL_N_OPS];', '',
           '/* A probe counter: its u64 attribute, and where probectl_probe_info has it. */',
           'struct probectl_nl_counter {', '\tu16 attr;', '\tu16 offset;', '};', '',
           '#define PROBECTL_NL_N_COUNTERS %d' % len(s.counters()),
           'extern const struct probectl_nl_counter '
           'probectl_nl_counters[PROBECTL_NL_N_COUNTERS];', '']
    for op, mode, sub, _, _ in ops:
        if mode == 'dumpit' and sub.get('pre'):
            out.append('int %s(struct netlink_callback *cb);' % sub['pre'].replace('-', '_'))
        if mode == 'dumpit' and sub.get('post'):
            out.append('int %s(struct netlink_callback *cb);' % sub['post'].replace('-', '_'))
        if mode == 'doit':
            out.append('int %s(struct sk_buff *skb, struct genl_info *info);'
                       % handler(op, mode))
        else:
            out.append('int %s(struct sk_buff *skb, struct netlink_callback *cb);'
                       % handler(op, mode))
    out += ['', '#endif /* PROBECTL_NL_GEN_H */']
    return '\n'.join(out) + '\n'


def cxx(s):
    out = ['// %s' % MARK,
           '// Attribute tables of the replies the client decodes: (id, name, wire type,',
           '// member of the struct it fills), and the probe counters.',
           '#pragma once', '',
           '#include "netlink/attr_table.hpp"', '',
           'namespace probectl::detail {']
    for op in s.ops:
        st = CXX_REPLIES.get(op['name'])
        if not st:
            continue
        sub = op.get('do') or op.get('dump')
        names = sub['reply']['attributes']
        var = 'k' + ''.join(w.capitalize() for w in op['name'].split('-')) + 'Reply'
        out += ['', 'inline constexpr auto %s = std::make_tuple(' % var]
        rows = []
        for n in names:
            a = s.attrs[n]
            rows.append('    attr<NlType::%s>(%s, "%s", &%s::%s)'
                        % (CXX_TYPES[a['type']], s.attr_c(n), n, st,
                           n.removeprefix('probe-').replace('-', '_')))
        out += [',\n'.join(rows) + ');']
    out += ['', '// The probe counters (ProbeInfo members), in PROBE_GET order.',
            'inline constexpr auto kProbeCounters = std::make_tuple(']
    out += [',\n'.join('    attr<NlType::U64>(%s, "%s", &ProbeInfo::%s)'
                       % (s.attr_c(n), n.removeprefix('probe-').replace('-', '_'),
                          n.removeprefix('probe-').replace('-', '_'))
                       for n in s.counters()) + ');']
    out += ['', '}  // namespace probectl::detail']
    return clang_format('\n'.join(out) + '\n', 'libctl/src/netlink/x.hpp')


def clang_format(text, like):
    """In the tree's C++ style, so that make format leaves it as generated."""
    return subprocess.run(['clang-format', '--style=file',
                           '--assume-filename=' + os.path.join(HOME, like)],
                          input=text, capture_output=True, text=True, check=True).stdout


C_TYPES = {'u8': '__u8', 'u16': '__u16', 'u32': '__u32', 'u64': '__u64',
           's32': '__s32', 's64': '__s64', 'binary': '__u8', 'string': 'char'}


def paragraphs(doc):
    text = (doc or '').strip()
    if '*/' in text:
        sys.exit('nlgen: "*/" in a doc: text')
    return [' '.join(p.split()) for p in re.split(r'\n\s*\n', text) if p.strip()]


def block_comment(doc, indent=''):
    """A doc: text as a kernel-style comment above a declaration."""
    paras = paragraphs(doc)
    if not paras:
        return []
    width = 80 - len(indent.expandtabs(8)) - 3
    if len(paras) == 1 and len(paras[0]) <= width - 3:
        return ['%s/* %s */' % (indent, paras[0])]
    out = [indent + '/*']
    for i, p in enumerate(paras):
        if i:
            out.append(indent + ' *')
        out += ['%s * %s' % (indent, line)
                for line in textwrap.wrap(p, width, break_on_hyphens=False)]
    return out + [indent + ' */']


def commented(decl, doc, indent='\t'):
    """decl with its doc: after it when one short line, else above it."""
    paras = paragraphs(doc)
    line = indent + decl
    if not paras:
        return [line]
    col = max(len(line.expandtabs(8)) // 8 + 1, 4 if indent else 3) * 8
    tabs = '\t' * ((col - len(line.expandtabs(8)) + 7) // 8)
    trailing = '%s%s/* %s */' % (line, tabs, paras[0])
    if len(paras) == 1 and len(trailing.expandtabs(8)) <= 100:
        return [trailing]
    return block_comment(doc, indent) + [line]


class Uapi:
    def __init__(self, s):
        self.s = s

    def enum_of(self, name):
        """How a member or attribute names the values it takes."""
        d = self.s.defs[name]
        if d.get('enum-name', True) is None:
            return c_name(d['name-prefix'], '*')
        return 'enum ' + c_name(d.get('enum-name') or 'probectl-' + name).lower()

    def entries(self, d):
        return [e if isinstance(e, dict) else {'name': e} for e in d['entries']]

    def const(self, d):
        return commented('#define %s\t%s' % (c_name('probectl', d['name']), d['value']),
                         d.get('doc'), '')

    def enum(self, d):
        out = [''] + block_comment(d.get('doc'))
        prefix = d['name-prefix']
        if d['type'] == 'flags' and d.get('enum-name', True) is None:
            for i, e in enumerate(self.entries(d)):
                out += commented('#define %s\t(1U << %d)' % (c_name(prefix, e['name']), i),
                                 e.get('doc'), '')
            return out
        out.append('enum %s {' % c_name(d.get('enum-name') or 'probectl-' + d['name']).lower())
        for i, e in enumerate(self.entries(d)):
            n = c_name(prefix, e['name'])
            if d['type'] == 'flags':
                n += ' = 1U << %d' % i
            elif i == 0 and d.get('value-start'):
                n += ' = %d' % d['value-start']
            out += commented(n + ',', e.get('doc'))
        cnt = d.get('enum-cnt-name')
        if d.get('render-max') or cnt:
            out.append('\t%s,' % c_name(cnt or '__' + prefix + 'max'))
        out.append('};')
        if d.get('render-max'):
            out.append('#define %s (%s - 1)'
                       % (c_name(prefix, 'max'), c_name('__' + prefix + 'max')))
        return out

    def struct(self, d):
        out = [''] + block_comment(d.get('doc'))
        out.append('struct %s {' % c_name('probectl', d['name']).lower())
        for m in d['members']:
            decl = '%s %s' % (C_TYPES[m['type']], m['name'].replace('-', '_'))
            if 'len' in m:
                n = m['len']
                decl += '[%s]' % (n if isinstance(n, int) else self.s.const_c(n))
            doc = m.get('doc') or (m.get('enum') and self.enum_of(m['enum']))
            out += commented(decl + ';', doc)
        return out + ['};']

    def attr_doc(self, a):
        t = {'string': 'NUL string', 'flag': 'flag'}.get(a['type'], a['type'])
        if a.get('struct'):
            one = 'exact-len' in a.get('checks', {})
            t += ', struct %s%s' % (c_name('probectl', a['struct']).lower(), '' if one else '[]')
        elif a.get('sub-type'):
            t += ', __%s[]' % a['sub-type']
        elif a.get('enum'):
            t += ', ' + self.enum_of(a['enum'])
        if a['type'] == 'pad':
            return None
        return t + (': ' + a['doc'] if a.get('doc') else '')

    def header(self):
        s = self.s
        y = s.y
        out = ['/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */',
               '/* %s */' % MARK]
        out += block_comment(y['doc'])
        out += ['#ifndef _UAPI_PROBECTL_H', '#define _UAPI_PROBECTL_H', '',
                '#include <linux/types.h>', '',
                '#define %s\t"%s"' % (c_name(y['c-family-name']), y['name']),
                '/* Family version: bumped on any incompatible change; libctl refuses others. */',
                '#define %s\t%d' % (c_name(y['c-version-name']), y['version']), '',
                '/* Limits shared by both sides (bytes unless noted). */']
        rest = []
        for d in y['definitions']:
            if d['type'] == 'const':
                out += self.const(d)
            elif d['type'] == 'struct':
                rest += self.struct(d)
            else:
                rest += self.enum(d)
        ops = y['operations']
        out += ['', 'enum %s {' % c_name(ops['enum-name']).lower(),
                '\t%s,' % c_name(s.op_prefix, 'unspec')]
        for op in s.ops:
            mode = next(m for m in ('do', 'dump', 'event') if m in op)
            out += commented(s.cmd_c(op) + ',', '%s: %s' % (mode, op.get('doc', '')))
        cnt = '__' + c_name(s.op_prefix, 'max')
        out += ['\t%s,' % cnt, '};',
                '#define %s (%s - 1)' % (c_name(s.op_prefix, 'max'), cnt)]
        aset = y['attribute-sets'][0]
        out += ['', 'enum %s {' % c_name(aset['enum-name']).lower(),
                '\t%s,' % s.attr_c('pad').replace('PAD', 'UNSPEC')]
        for a in aset['attributes']:
            out += commented(s.attr_c(a['name']) + ',', self.attr_doc(a))
        out += ['\t%s,' % c_name(aset['attr-cnt-name']), '};',
                '#define %s (%s - 1)' % (c_name(aset['attr-max-name']),
                                         c_name(aset['attr-cnt-name']))]
        out += rest
        out += ['', '#endif /* _UAPI_PROBECTL_H */']
        return '\n'.join(out) + '\n'


def counters_hpp(s):
    """The probe counters once for libctl and the CLI: X-macros over member names."""
    kernel = [n.removeprefix('probe-').replace('-', '_') for n in s.counters()]
    shown, docs = [], {}
    for c in s.y['counters']:
        attr = c if isinstance(c, str) else c['name']
        name = attr.replace('-', '_')
        if isinstance(c, str):
            if name not in kernel:
                sys.exit('nlgen: counters: %s is no counter attribute' % attr)
            docs[name] = s.attrs['probe-' + attr].get('doc', '')
        else:
            docs[name] = c['doc']
        shown.append(name)
    missing = set(kernel) - set(shown)
    if missing:
        sys.exit('nlgen: counters: %s missing' % ', '.join(sorted(missing)))

    def macro(name, names):
        return ['#define %s(X) \\' % name] + ['    X(%s)%s' % (n, ' \\' * (i + 1 < len(names)))
                                            for i, n in enumerate(names)]
    out = ['// %s' % MARK,
           '// The per-probe counters, each a std::uint64_t member of the same name in',
           '// ProbeInfo (client.hpp) and ProbeStats (session.hpp), its column (upper case)',
           '// and JSON key in probectl list and the trace summary:']
    for n in shown:
        out += textwrap.wrap(' '.join(docs[n].split()), 96, initial_indent='//   %s: ' % n,
                             subsequent_indent='//       ', break_on_hyphens=False)
    out += ['#pragma once', '', '#include <cstdint>', '',
            '// PROBE_GET\'s counters, in its order (ProbeInfo, probectl list).']
    out += macro('PROBECTL_PROBE_COUNTERS', kernel)
    out += ['', '// A trace\'s counters, in summary order (ProbeStats, the summary).']
    out += macro('PROBECTL_TRACE_COUNTERS', shown)
    out += ['', '// The members: PROBECTL_PROBE_COUNTERS(PROBECTL_COUNTER_MEMBER) in a struct.',
            '#define PROBECTL_COUNTER_MEMBER(name) std::uint64_t name = 0;']
    return clang_format('\n'.join(out) + '\n', 'libctl/include/probectl/x.hpp')


def main():
    global TOP
    args = sys.argv[1:]
    check = '--check' in args
    if '--top' in args:
        TOP = os.path.abspath(args[args.index('--top') + 1])
    s = Spec(os.path.join(TOP, SPEC))
    c, ops = kernel_c(s)
    files = {'kmod/uapi/probectl.h': Uapi(s).header(), 'kmod/nl_gen.c': c,
             'kmod/nl_gen.h': kernel_h(s, ops),
             'libctl/src/netlink/attrs_gen.hpp': cxx(s),
             'libctl/include/probectl/counters.hpp': counters_hpp(s)}
    stale = []
    for rel, text in files.items():
        path = os.path.join(TOP, rel)
        old = open(path).read() if os.path.exists(path) else None
        if old == text:
            continue
        if check:
            stale.append(rel)
        else:
            with open(path, 'w') as f:
                f.write(text)
    for rel in stale:
        print('nlgen: %s is stale: run tools/nlgen.py' % rel)
    return 1 if stale else 0


if __name__ == '__main__':
    sys.exit(main())
