#!/usr/bin/env python3
"""Breaks one rule of the cpuhp contract at a time in a scratch copy of the
library and checks that the cpuhp tests notice.  Prints one line per mutant;
exits nonzero if any mutant survives.  Usage: tools/cpuhp-mutants.py [BUILD]"""
import os, shutil, subprocess, sys, tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (rule, file, original text, broken text)
MUTANTS = [
    ("up rollback skips the failing state's teardown", "cpuhp/core.c",
     "err = up ? cpuhp_run_down(m, cpu, prev, true)",
     "st->state += up; err = up ? cpuhp_run_down(m, cpu, prev, true)"),
    ("down rollback skips the failing state's startup", "cpuhp/core.c",
     "err = up ? cpuhp_run_down(m, cpu, prev, true)",
     "st->state -= !up; err = up ? cpuhp_run_down(m, cpu, prev, true)"),
    ("a failed up is rolled back", "cpuhp/core.c",
     "if (ret && !st->broken) {", "if (0) {"),
    ("a failed rollback marks the CPU broken", "cpuhp/core.c",
     "\t\tif (err)\n\t\t\tcpuhp_mark_broken(", "\t\tif (0)\n\t\t\tcpuhp_mark_broken("),
    ("a broken CPU is refused", "cpuhp/core.c",
     "return m->cpus[cpu].broken ? -EIO : 0;", "return 0;"),
    ("cant-stop states are not targets", "cpuhp/core.c",
     "return step->name && !(step->flags & CPUHP_F_CANT_STOP);", "return step->name;"),
    ("startups run in order up to the target", "cpuhp/core.c",
     "while (st->state < target) {", "while (st->state < target - 1) {"),
    ("states without a callback are skipped", "cpuhp/invoke.c",
     "\tif (!step->name)\n\t\treturn false;\n\tif (step->multi",
     "\tif (!step->name)\n\t\treturn true;\n\tif (step->multi"),
    ("fault injection is one-shot", "cpuhp/invoke.c",
     "st->fail = CPUHP_INVALID;\n\t\tcpuhp_notify_step", "cpuhp_notify_step"),
    ("injected failure does not call the callback", "cpuhp/invoke.c",
     "\t\t\t\t  -EAGAIN);\n\t\treturn -EAGAIN;", "\t\t\t\t  -EAGAIN);\n\t\t(void)0;"),
    ("no injection at no-fail states", "cpuhp/core.c",
     "if ((step->flags & CPUHP_F_NOFAIL) ||", "if (0 ||"),
    ("no injection at states without callbacks", "cpuhp/core.c",
     "(!cpuhp_step_has_cb(step, true) &&\n\t\t\t     !cpuhp_step_has_cb(step, false)))",
     "0)"),
    ("no-fail errors are ignored", "cpuhp/invoke.c",
     "if (ret && (step->flags & CPUHP_F_NOFAIL)) {\n\t\t/* As Linux", "if (0) {\n\t\t/* As Linux"),
    ("AP states run through run_on_cpu", "cpuhp/invoke.c",
     "if ((step->flags & CPUHP_F_AP) && m->plat && m->plat->run_on_cpu)", "if (0)"),
    ("install invokes only CPUs at or above the state", "cpuhp/setup.c",
     "if (m->cpus[cpu].state < state)\n\t\t\tcontinue;", "if (0)\n\t\t\tcontinue;"),
    ("failed install is undone on the CPUs done", "cpuhp/setup.c",
     "if (ret)\n\t\tcpuhp_issue_all(m, state, false, node, failed, true, NULL);",
     "(void)failed;"),
    ("failed install is uninstalled", "cpuhp/setup.c",
     "if (ret)\n\t\tcpuhp_uninstall(step);", ""),
    ("dynamic range full gives -ENOSPC", "cpuhp/setup.c",
     "return -ENOSPC;", "return 1;"),
    ("installing on a used state is -EBUSY", "cpuhp/setup.c",
     "return m->steps[state].name ? -EBUSY : state;", "return state;"),
    ("removal with invoke runs teardowns", "cpuhp/setup.c",
     "\t\tif (invoke)\n\t\t\tcpuhp_issue_all(m, state, false, NULL,", "\t\tif (invoke && 0)\n\t\t\tcpuhp_issue_all(m, state, false, NULL,"),
    ("multi state with instances is not removed", "cpuhp/setup.c",
     "if (!ret && m->steps[state].instances) {", "if (0) {"),
    ("a failed instance undoes the instances done", "cpuhp/invoke.c",
     "\t\t\tcpuhp_undo_instances(c, done);", "\t\t\tif (0) cpuhp_undo_instances(c, done);"),
    ("instances are walked in insertion order", "cpuhp/setup.c",
     "\t\tnode->next = NULL;\n\t\tnode->linked = true;\n\t\t*tail = node;",
     "\t\tnode->next = m->steps[state].instances;\n\t\tnode->linked = true;\n\t\tm->steps[state].instances = node; (void)tail;"),
    ("parallel bring-up kicks every CPU first", "cpuhp/core.c",
     "bool use_kick = kick != CPUHP_INVALID && target > kick;", "bool use_kick = false;"),
    ("a CPU failing parallel bring-up ends offline", "cpuhp/core.c",
     "\t    m->cpus[cpu].state > CPUHP_OFFLINE)\n\t\tcpuhp_walk(", "\t    0)\n\t\tcpuhp_walk("),
    ("re-entry from a callback is refused", "cpuhp/invoke.c",
     "\tif (m->in_callback) {", "\tif (0) {"),
]


def main():
    work = tempfile.mkdtemp(prefix="cpuhp-mutants-")
    survivors = 0
    try:
        src = os.path.join(work, "src")
        shutil.copytree(TOP, src, ignore=shutil.ignore_patterns("build*", ".git"))
        bld = os.path.join(work, "build")
        subprocess.run(["meson", "setup", bld, src, "-Dlab=false"], check=True,
                       stdout=subprocess.DEVNULL)
        for rule, path, old, new in MUTANTS:
            f = os.path.join(src, path)
            orig = open(f).read()
            if orig.count(old) != 1:
                print(f"STALE    {rule}: pattern not found once in {path}")
                survivors += 1
                continue
            open(f, "w").write(orig.replace(old, new))
            try:
                b = subprocess.run(["ninja", "-C", bld], capture_output=True)
                if b.returncode:
                    print(f"NOBUILD  {rule}")
                    survivors += 1
                    continue
                t = subprocess.run(["meson", "test", "-C", bld, "--no-rebuild",
                                    "--suite", "cpuhp"], capture_output=True)
                killed = t.returncode != 0
                print(f"{'killed ' if killed else 'SURVIVED'} {rule}")
                survivors += not killed
            finally:
                open(f, "w").write(orig)
    finally:
        shutil.rmtree(work)
    print(f"{len(MUTANTS) - survivors} of {len(MUTANTS)} mutants killed")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
