#!/usr/bin/env python3
"""Builds the Java side of the binding for meson (whose custom targets need known outputs, while SWIG
and javac write one file per class):

  build_java.py wrap  --swig S --javac J --interface trainwatch.i --include DIR... --wrap OUT.cxx
                      --jar OUT.jar SOURCE.java...
      runs SWIG (C++ wrapper + generated classes) and compiles them with the hand-written sources
      into the jar.
  build_java.py tests --javac J --classpath CP --jar OUT.jar SOURCE.java...
      compiles the test sources against CP into a jar.
"""
import argparse
import os
import shutil
import subprocess
import sys
import zipfile

JAVAC_FLAGS = ["--release", "11", "-encoding", "UTF-8", "-Xlint:all,-serial,-options", "-Werror",
               "-implicit:none"]


def run(command):
    result = subprocess.run(command)
    if result.returncode != 0:
        sys.exit(f"{os.path.basename(command[0])} failed ({result.returncode}): {' '.join(command)}")


def compile_to_jar(javac, sources, classpath, work, jar):
    classes = os.path.join(work, "classes")
    shutil.rmtree(classes, ignore_errors=True)
    os.makedirs(classes)
    command = [javac, *JAVAC_FLAGS, "-d", classes]
    if classpath:
        command += ["-cp", classpath]
    run(command + sources)
    # A deterministic jar: sorted entries, fixed timestamps.
    with zipfile.ZipFile(jar + ".tmp", "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr(zipfile.ZipInfo("META-INF/MANIFEST.MF", (1980, 1, 1, 0, 0, 0)),
                     "Manifest-Version: 1.0\r\nCreated-By: trainwatch\r\n\r\n")
        for root, _, files in sorted(os.walk(classes)):
            for name in sorted(files):
                path = os.path.join(root, name)
                info = zipfile.ZipInfo(os.path.relpath(path, classes), (1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                with open(path, "rb") as data:
                    out.writestr(info, data.read())
    os.replace(jar + ".tmp", jar)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["wrap", "tests"])
    parser.add_argument("--swig")
    parser.add_argument("--javac", required=True)
    parser.add_argument("--interface")
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--wrap")
    parser.add_argument("--classpath", default="")
    parser.add_argument("--jar", required=True)
    parser.add_argument("sources", nargs="*")
    args = parser.parse_intermixed_args()

    work = args.jar + ".d"
    sources = list(args.sources)
    if args.mode == "wrap":
        generated = os.path.join(work, "src", "org", "trainwatch")
        shutil.rmtree(generated, ignore_errors=True)
        os.makedirs(generated)
        run([args.swig, "-c++", "-java", "-package", "org.trainwatch", "-module", "TrainWatch", "-DSWIGWORDSIZE64",
             *[f"-I{d}" for d in args.include], "-outdir", generated, "-o", args.wrap, args.interface])
        sources += sorted(os.path.join(generated, f) for f in os.listdir(generated) if f.endswith(".java"))
    compile_to_jar(args.javac, sources, args.classpath, work, args.jar)


if __name__ == "__main__":
    main()
