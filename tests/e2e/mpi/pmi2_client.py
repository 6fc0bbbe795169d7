#!/usr/bin/env python3
"""A PMI-2 client as MPICH's PMI2 library speaks it, for tests/e2e/mpi.sh: over the socket
PMI_FD names, init in PMI-1 syntax asking for version 2, then fullinit, the job's id and
process mapping, a put, a fence, the next rank's value (with a ';' in it, which the wire
doubles), a node attribute, finalize. Prints "rank R of N ok MAPPING" or exits 1 saying what
went wrong."""
import os
import socket
import sys


def fail(what):
    print(f"rank {os.environ.get('PMI_RANK', '?')}: {what}", file=sys.stderr)
    sys.exit(1)


sock = socket.socket(fileno=int(os.environ["PMI_FD"]))
buf = b""


def read_exact(n):
    global buf
    while len(buf) < n:
        chunk = sock.recv(4096)
        if not chunk:
            fail("the server closed the connection")
        buf += chunk
    out, buf = buf[:n], buf[n:]
    return out


def v1(line):
    sock.sendall(line.encode() + b"\n")
    global buf
    while b"\n" not in buf:
        chunk = sock.recv(4096)
        if not chunk:
            fail("the server closed the connection")
        buf += chunk
    reply, buf = buf.split(b"\n", 1)
    return dict(w.split("=", 1) for w in reply.decode().split() if "=" in w)


def v2(cmd, **args):
    body = f"cmd={cmd};" + "".join(f"{k}={str(v).replace(';', ';;')};" for k, v in args.items())
    sock.sendall(f"{len(body):6d}".encode() + body.encode())
    n = int(read_exact(6).decode())
    text = read_exact(n).decode()
    out, key, val, in_val, i = {}, "", "", False, 0
    while i < len(text):
        c = text[i]
        if c == ";" and in_val and i + 1 < len(text) and text[i + 1] == ";":
            val += ";"
            i += 2
            continue
        if c == ";":
            out[key] = val
            key, val, in_val = "", "", False
        elif c == "=" and not in_val:
            in_val = True
        elif in_val:
            val += c
        else:
            key += c
        i += 1
    if out.get("rc") != "0":
        fail(f"{cmd} answered {out}")
    return out


init = v1("cmd=init pmi_version=2 pmi_subversion=0")
if init.get("cmd") != "response_to_init" or init.get("pmi_version") != "2":
    fail(f"init answered {init}")
rank = int(os.environ["PMI_RANK"])
full = v2("fullinit", pmirank=rank, threaded="FALSE")
size = int(full["size"])
if int(full["rank"]) != rank or size != int(os.environ["PMI_SIZE"]):
    fail(f"fullinit answered {full}")
jobid = v2("job-getid")["jobid"]
mapping = v2("info-getjobattr", key="PMI_process_mapping")
if mapping.get("found") != "TRUE":
    fail(f"no PMI_process_mapping: {mapping}")
v2("kvs-put", key=f"card-{rank}", value=f"addr;{rank}")
v2("kvs-fence")
peer = (rank + 1) % size
got = v2("kvs-get", jobid=jobid, srcid=-1, key=f"card-{peer}")
if got.get("found") != "TRUE" or got.get("value") != f"addr;{peer}":
    fail(f"rank {peer}'s card: {got}")
v2("info-putnodeattr", key=f"here-{rank}", value="1")
if v2("info-getnodeattr", key=f"here-{rank}", wait="FALSE").get("found") != "TRUE":
    fail("a node attribute put here is not found here")
v2("finalize")
print(f"rank {rank} of {size} ok {mapping['value']}")
