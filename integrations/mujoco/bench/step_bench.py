"""mj_step on the liver with trocar.contact against MuJoCo's own flex-vs-capsule contacts, in one run.

The scene is examples/press_liver.py's: the liver (4.4k triangles) as a 2-D flexcomp with radial dofs and
membrane elasticity, MuJoCo 4's discrete integrator, timestep 2 ms, and a 4 mm capsule through a fixed port.
The tool palpates: it goes 1.2 cm in and back out once a second, for 2 s (1000 steps, the tool touching the
liver in about two thirds of them). Four set-ups of the same scene and motion:
- **trocar.contact**: the plugin's penalty forces (stiffness 100 N/m per hit, damping 0.02 N·s/m), MuJoCo's own
  contacts off for the tool and the flex, as docs/mujoco.md says;
- **MuJoCo contacts**: no plugin; the flex and the capsule collide through MuJoCo's own collision detection
  and constraint solver (contype/conaffinity 1, flex self-collision off);
- **no contact**: neither; the tool passes through the liver: what the rest of the step costs;
- **trocar.contact, stiffness 0**: the plugin's queries without a force, so that the liver moves as with no
  contact: its difference with no contact is the plugin's own share of the step (trocar.contact's difference
  with no contact adds MuJoCo's work on the membrane the forces deform).

Each set-up's median and mean time of one `mj_step` (the tool's mocap pose set outside the timer), the steps
in contact and the mean hits (plugin) or contacts (MuJoCo) in those steps, in 5 passes interleaved with the
other set-ups' (the pass with the median mean is shown).

    python integrations/mujoco/bench/step_bench.py [LIVER.obj]   (prints Markdown; scripts/bench-docs.sh mujoco)
"""

import importlib.util
import os
import platform
import statistics
import sys
import time

import numpy as np

import mujoco

ROUNDS = 5
SECONDS = 2.0
HERE = os.path.dirname(os.path.abspath(__file__))


def demo():
    spec = importlib.util.spec_from_file_location("press_liver", os.path.join(HERE, "..", "examples", "press_liver.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def variant(xml, name):
    """The demo's MJCF as set-up `name`."""
    if name == "trocar.contact":
        return xml
    if name == "trocar.contact, stiffness 0":
        return xml.replace('<config key="stiffness" value="100"/>', '<config key="stiffness" value="0"/>')
    start, end = xml.index("  <extension>"), xml.index("</extension>") + len("</extension>\n")
    xml = xml[:start] + xml[end:]
    xml = xml.replace('  <sensor><plugin instance="contact" name="contact"/></sensor>\n', "")
    if name == "MuJoCo contacts":
        for part in ('<contact selfcollide="none" contype="0"', '<geom name="tool" type="capsule"'):
            start = xml.index(part)
            end = xml.index("/>", start)
            xml = xml[:start] + xml[start:end].replace('contype="0" conaffinity="0"', 'contype="1" conaffinity="1"') + xml[end:]
    return xml


def palpate(demo, model, data, seconds):
    """The palpation: the demo's tool 1.2 cm in and back out, once a second."""
    demo.insert_tool(model, data, 0.006 * (1 - np.cos(2 * np.pi * seconds)))


def run(demo, model, name):
    """One pass of the motion: per-step times (s), steps in contact, mean hits or contacts in them."""
    data = mujoco.MjData(model)
    times, touching = [], []
    while data.time < SECONDS - 1e-9:
        palpate(demo, model, data, data.time)
        start = time.perf_counter()
        mujoco.mj_step(model, data)
        times.append(time.perf_counter() - start)
        if data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number:
            sys.exit(f"step_bench: {name} went unstable at t = {data.time:.3f} s")
        count = data.sensordata[0] if name.startswith("trocar") else data.ncon
        if count:
            touching.append(count)
    return times, len(touching), statistics.mean(touching) if touching else 0.0


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            lines = cpuinfo.read().splitlines()
        model = next(l.split(":", 1)[1].strip() for l in lines if l.startswith("model name"))
        logical = sum(l.startswith("processor") for l in lines)
    except (OSError, StopIteration):
        logical = os.cpu_count()
    return f"{model}, {logical} logical cores in /proc/cpuinfo, {len(os.sched_getaffinity(0))} available to this process"


def main(obj):
    import trocar_mujoco

    press_liver = demo()
    xml = press_liver.scene(obj)
    names = ["trocar.contact", "MuJoCo contacts", "no contact", "trocar.contact, stiffness 0"]
    models = {n: mujoco.MjModel.from_xml_string(variant(xml, n)) for n in names}
    rounds = {n: [] for n in names}
    for _ in range(ROUNDS):
        for n in names:
            rounds[n].append(run(press_liver, models[n], n))
    steps = len(rounds[names[0]][0][0])
    print(f"- machine: {machine()}")
    print(f"- MuJoCo {mujoco.__version__} (trocar_mujoco built against {trocar_mujoco.MUJOCO_VERSION}), "
          f"Python {platform.python_version()}; the plugin's trocar context runs on one thread")
    print(f"- the liver: {models[names[0]].nflexelem} triangles, {models[names[0]].nflexvert} vertices; "
          f"{steps} steps of 2 ms per pass, {ROUNDS} passes per set-up, interleaved")
    print()
    print("| set-up | median step | mean step | steps in contact | hits or contacts per contact step |")
    print("|---|--:|--:|--:|--:|")
    means = {}
    for n in names:
        by_mean = sorted(rounds[n], key=lambda r: statistics.mean(r[0]))
        times, touching, per_step = by_mean[len(by_mean) // 2]
        means[n] = statistics.mean(times)
        count = f"{per_step:.0f} {'hits' if n.startswith('trocar') else 'contacts'}" if touching else "–"
        print(f"| {n} | {statistics.median(times) * 1e3:.3f} ms | {means[n] * 1e3:.3f} ms | {touching} of {steps} "
              f"| {count} |")
    plugin, own, bare = means["trocar.contact"], means["MuJoCo contacts"], means["no contact"]
    idle = means["trocar.contact, stiffness 0"]
    print()
    print(f"- the plugin's own work (stiffness 0 - no contact: the same motion, the queries run, no force): "
          f"{(idle - bare) * 1e6:.0f} µs per step, {(idle - bare) / plugin:.0%} of the step with trocar.contact")
    print(f"- trocar.contact - no contact: {(plugin - bare) * 1e6:.0f} µs per step, {(plugin - bare) / plugin:.0%} of "
          f"its step (the plugin's work and MuJoCo integrating the membrane it deforms)")
    print(f"- MuJoCo contacts - no contact: {(own - bare) * 1e6:.0f} µs per step, {(own - bare) / own:.0%} of its step")
    print(f"- mj_step with trocar.contact / with MuJoCo's own contacts: {plugin / own:.2f}× (means)")

if __name__ == "__main__":
    default = os.path.join(HERE, "..", "..", "..", "data", "meshes", "liver-smooth.obj")
    main(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else default))
