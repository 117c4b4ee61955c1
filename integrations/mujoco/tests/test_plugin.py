"""Tests of the MuJoCo plugin trocar.contact, run against the installed packages `mujoco`, `trocar_mujoco` and
`trocar` (the ctypes binding, for the C API's answers) in a virtual environment (integrations/mujoco/run-tests.sh).

TROCAR_DATA: the repository's data/ (the liver mesh); TROCAR_MUJOCO_PYPROJECT: integrations/mujoco/pyproject.toml.
"""

import os
import re
import threading
import unittest

import numpy as np

import mujoco  # loads trocar.contact through the entry point: nothing here imports trocar_mujoco first

DATA = os.environ.get("TROCAR_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "..", "data"))
LIVER = os.path.abspath(os.path.join(DATA, "meshes", "liver-smooth.obj"))

DT = 0.002
TOOL_RADIUS = 0.005
FLEX_RADIUS = 0.001


def plugin_block(flex="sheet", geom="tool", stiffness="50", extra=()):
    keys = [("flex", flex), ("geom", geom), ("stiffness", stiffness), *extra]
    config = "".join(f'<config key="{k}" value="{v}"/>' for k, v in keys if v is not None)
    return (
        f'<extension><plugin plugin="trocar.contact"><instance name="contact">{config}</instance></plugin>'
        f"</extension>"
    )


def sheet_scene(plugin=True, stiffness="0", tool="capsule", tool_length=0.02, extra=(), flex_extra="",
                dim=2, gravity=False):
    """A 21 x 21 flex sheet (2 cm spacing, corners pinned) and a mocap tool above it, its handle on top."""
    contact = 'contype="0" conaffinity="0"' if plugin else ""
    size = f'size="{TOOL_RADIUS}"' if tool == "capsule" else f'size="{TOOL_RADIUS} {TOOL_RADIUS} {TOOL_RADIUS}"'
    shape = f'fromto="0 0 {tool_length} 0 0 0"' if tool == "capsule" else ""
    count = "21 21 1" if dim == 2 else "5 5 3"
    pins = '<pin id="0 20 420 440"/>' if dim == 2 else ""
    return f"""<mujoco>
  <option timestep="{DT}" {'' if gravity else 'gravity="0 0 0"'}/>
  {plugin_block(stiffness=stiffness, extra=extra) if plugin else ""}
  <worldbody>
    <flexcomp name="sheet" type="grid" count="{count}" spacing="0.02 0.02 0.02" radius="{FLEX_RADIUS}"
              dim="{dim}" mass="0.5" {flex_extra}>
      <edge equality="true"/>{pins}
    </flexcomp>
    <body name="tool" mocap="true" pos="0.0031 0.0047 0.1">
      <geom name="tool" type="{tool}" {shape} {size} {contact}/>
    </body>
    <geom name="block" type="box" size="0.01 0.01 0.01" pos="1 1 1" contype="0" conaffinity="0"/>
    <site name="port" pos="0 0 0.2"/>
  </worldbody>
  {'<sensor><plugin instance="contact" name="contact"/></sensor>' if plugin else ""}
</mujoco>"""


def drive_down(model, data, speed, steps, start=0.1003):
    """Moves the mocap tool down at `speed`; yields after each step with the tool's height at that step."""
    for i in range(steps):
        z = start - speed * i * DT
        data.mocap_pos[0][2] = z
        mujoco.mj_step(model, data)
        yield i, z


class Registration(unittest.TestCase):
    def test_import_mujoco_registers_the_plugin(self):
        # This module imported only mujoco: the entry point must have registered trocar.contact.
        model = mujoco.MjModel.from_xml_string(sheet_scene())
        self.assertEqual(model.nplugin, 1)
        self.assertEqual(model.nsensordata, 3)

    def test_versions_agree(self):
        import trocar_mujoco

        self.assertEqual(trocar_mujoco.MUJOCO_VERSION, mujoco.__version__)
        pyproject = os.environ.get("TROCAR_MUJOCO_PYPROJECT")
        if pyproject:
            with open(pyproject) as f:
                pins = set(re.findall(r'"mujoco(?:-core)?==([0-9.]+)"', f.read()))
            self.assertEqual(pins, {trocar_mujoco.MUJOCO_VERSION})
        self.assertTrue(os.path.isfile(trocar_mujoco.plugin_path()))

    def test_a_mismatched_mujoco_is_refused_with_a_message(self):
        import trocar_mujoco

        class Other:
            __version__ = "3.9.0"

        with self.assertRaisesRegex(ImportError, r"built for MuJoCo 4\.0\.0 but MuJoCo 3\.9\.0 is installed"):
            trocar_mujoco._check_version(Other)


class BadConfig(unittest.TestCase):
    def assert_refused(self, xml, *words):
        with self.assertRaises(ValueError) as caught:
            mujoco.MjModel.from_xml_string(xml)
        message = str(caught.exception)
        for word in words:
            self.assertIn(word, message)

    def scene_with(self, **keys):
        base = {"flex": "sheet", "geom": "tool", "stiffness": "50"}
        base.update(keys)
        extra = [(k, v) for k, v in base.items() if k not in ("flex", "geom", "stiffness")]
        block = plugin_block(base["flex"], base["geom"], base["stiffness"], extra)
        return sheet_scene().replace(plugin_block(stiffness="0"), block)

    def test_each_bad_key_is_named(self):
        cases = [
            ({"flex": "nope"}, "'flex'", "nope"),
            ({"flex": None}, "'flex' is missing"),
            ({"geom": "nope"}, "'geom'", "nope"),
            ({"geom": None}, "'geom' is missing"),
            ({"geom": "block"}, "'geom'", "not a capsule"),
            ({"stiffness": "-1"}, "'stiffness'", "-1"),
            ({"stiffness": "abc"}, "'stiffness'"),
            ({"stiffness": "nan"}, "'stiffness'"),
            ({"stiffness": None}, "'stiffness' is missing"),
            ({"damping": "-0.5"}, "'damping'"),
            ({"entry": "nowhere"}, "'entry'", "nowhere"),
            ({"dynamic": "maybe"}, "'dynamic'"),
        ]
        for keys, *words in cases:
            with self.subTest(keys=keys):
                self.assert_refused(self.scene_with(**keys), "trocar.contact", *words)

    def test_an_unknown_key_is_refused(self):
        self.assert_refused(self.scene_with(stifness="3"), "stifness")

    def test_an_interpolated_flex_is_refused(self):
        xml = sheet_scene(dim=3, flex_extra='dof="trilinear"').replace('<edge equality="true"/>', "")
        self.assert_refused(xml, "'flex'", "interpolated")

    def test_a_good_config_still_loads_after_refusals(self):
        self.assertEqual(mujoco.MjModel.from_xml_string(self.scene_with(damping="0.1", dynamic="false")).nplugin, 1)


class Sheet(unittest.TestCase):
    def crossing_steps(self, speed, steps, length):
        """Steps in which the round tool (its radius and the flex's) reaches the flat sheet at z = 0: its axis
        spans [z, z + length] at the step's end and came down from the previous step's height."""
        r = TOOL_RADIUS + FLEX_RADIUS
        z = [0.1003 - speed * i * DT for i in range(steps)]
        return {i for i in range(steps) if z[i] - r <= 0 <= z[max(i - 1, 0)] + length + r}

    def test_a_fast_thin_tool_is_caught_in_every_step_it_crosses_the_sheet(self):
        length = 0.02
        for speed in (0.25, 2.5, 10.0, 40.0):
            steps = int(round(0.2 / speed / DT)) + 1
            expected = self.crossing_steps(speed, steps, length)
            own_model = mujoco.MjModel.from_xml_string(sheet_scene(plugin=False, tool_length=length))
            own_data = mujoco.MjData(own_model)
            own = {i for i, _ in drive_down(own_model, own_data, speed, steps) if own_data.ncon > 0}
            model = mujoco.MjModel.from_xml_string(sheet_scene(stiffness="0", tool_length=length))
            data = mujoco.MjData(model)
            caught = {i for i, _ in drive_down(model, data, speed, steps) if data.sensordata[0] > 0}
            print(f"  {speed:5.2f} m/s: the tool crosses the sheet in {len(expected)} of {steps} steps; MuJoCo's own "
                  f"contacts in {len(own)}, trocar.contact in {len(caught)}")
            self.assertEqual(caught, expected, f"at {speed} m/s")
            if speed >= 40:
                self.assertEqual(own, set(), "MuJoCo's own contacts were expected to miss this tool")

    def test_with_stiffness_the_sheet_deflects_further(self):
        def lowest(plugin, stiffness):
            model = mujoco.MjModel.from_xml_string(sheet_scene(plugin=plugin, stiffness=stiffness))
            data = mujoco.MjData(model)
            low = 0.0
            for _ in drive_down(model, data, 0.25, 301):
                self.assertTrue(np.isfinite(data.flexvert_xpos).all())
                low = min(low, data.flexvert_xpos[:, 2].min())
            return low

        own, sensing, pushing = lowest(False, "0"), lowest(True, "0"), lowest(True, "50")
        print(f"  lowest sheet vertex: MuJoCo's own contacts {own * 100:.2f} cm, plugin without stiffness "
              f"{sensing * 100:.2f} cm, with 50 N/m per hit {pushing * 100:.2f} cm")
        self.assertEqual(sensing, 0.0)
        self.assertLess(pushing, own - 0.02)

    def test_a_free_tool_swept_sideways_and_turning_misses_nothing(self):
        # Both ends move (no port): every triangle a fine-grained replay of the motion touches must be reported.
        import trocar
        import trocar_mujoco

        model = mujoco.MjModel.from_xml_string(sheet_scene(stiffness="0", tool_length=0.06))
        data = mujoco.MjData(model)
        ctx = trocar.Context(backend=trocar.BACKEND_CPU)
        results = ctx.results()
        mesh = None
        previous = None
        for i in range(60):
            angle = 0.05 * i
            data.mocap_pos[0] = [0.1 * np.cos(angle) - 0.05, 0.08 * np.sin(1.3 * angle), 0.004 - 0.0002 * i]
            data.mocap_quat[0] = [np.cos(angle), np.sin(angle) * 0.6, np.sin(angle) * 0.8, 0]
            mujoco.mj_step(model, data)
            reported = set(trocar_mujoco.hits(data))
            ends = capsule_ends(model, data)
            positions = data.flexvert_xpos.astype(np.float32)
            if mesh is None:
                mesh = ctx.mesh_create(positions, model.flex_elem.astype(np.uint32))
            else:
                ctx.mesh_update_positions(mesh, positions)
            if previous is not None:
                touched = set()
                for k in range(17):  # the true capsule at 17 instants of the step, both ends interpolated
                    t = k / 16
                    a = (1 - t) * previous[0] + t * ends[0]
                    b = (1 - t) * previous[1] + t * ends[1]
                    ctx.query_static(mesh, trocar.Tool(a, b, TOOL_RADIUS + FLEX_RADIUS), results)
                    touched |= {h.triangle for h in results.hits()}
                self.assertLessEqual(touched, reported, f"step {i}: missed {sorted(touched - reported)}")
            previous = ends


class Solid(unittest.TestCase):
    def test_a_3d_flex_is_touched_on_its_surface(self):
        # A 3-D flex (a 5 x 5 x 3 block of tetrahedra): trocar sees its shell, and its hits equal the C API's there.
        import trocar
        import trocar_mujoco

        xml = sheet_scene(stiffness="20", dim=3, extra=[("entry", "port")]).replace(
            '<edge equality="true"/>', '<contact contype="0" conaffinity="0"/>')
        model = mujoco.MjModel.from_xml_string(xml)
        data = mujoco.MjData(model)
        shell = model.flex_shell.reshape(-1, 3).astype(np.uint32)
        self.assertEqual(model.flex_dim[0], 3)
        self.assertLess(shell.max(), model.flex_vertnum[0])
        ctx = trocar.Context(backend=trocar.BACKEND_CPU)
        results = ctx.results()
        port = model.site("port").pos
        mesh = ctx.mesh_create(data.flexvert_xpos.astype(np.float32), shell)
        touching, previous_tip = 0, None
        for i, _ in drive_down(model, data, 0.5, 120, start=0.0703):
            ctx.mesh_update_positions(mesh, data.flexvert_xpos.astype(np.float32))
            tip = port_tip(model, data, port)
            expected = c_api_hits(ctx, results, mesh, port, previous_tip, tip, TOOL_RADIUS + FLEX_RADIUS)
            self.assertEqual(trocar_mujoco.hits(data), expected, f"step {i}")
            touching += bool(expected)
            previous_tip = tip
        self.assertGreater(touching, 20)


def port_tip(model, data, port):
    """The tip through a fixed port, as the plugin takes it: the capsule's end farther from the port."""
    lower, upper = capsule_ends(model, data)
    return upper if np.linalg.norm(upper - port) >= np.linalg.norm(lower - port) else lower


def c_api_hits(ctx, results, mesh, port, previous_tip, tip, radius):
    """The C API's hits for the plugin's query through a fixed port: static at the first step or when the tip did
    not move (in floats), else dynamic from the previous tip."""
    import trocar

    tool = trocar.Tool(port, previous_tip if previous_tip is not None else tip, radius)
    if previous_tip is None or np.array_equal(np.float32(previous_tip), np.float32(tip)):
        ctx.query_static(mesh, tool, results)
    else:
        ctx.query_dynamic(mesh, tool, tip, results)
    return [h.triangle for h in results.hits()]


def capsule_ends(model, data, geom=0):
    """The capsule's -z and +z ends, as the plugin reads them."""
    g = model.geom("tool").id if geom == 0 else geom
    half = model.geom_size[g][1]
    axis = data.geom_xmat[g].reshape(3, 3)[:, 2]
    centre = data.geom_xpos[g]
    return np.array(centre - half * axis), np.array(centre + half * axis)


def liver_scene():
    with open(LIVER) as obj:
        v = np.array([[float(x) for x in line.split()[1:4]] for line in obj if line.startswith("v ")])
    pins = " ".join(str(i) for i in np.where(v[:, 2] < v[:, 2].min() + 0.6)[0])
    return f"""<mujoco>
  <option timestep="{DT}" gravity="0 0 0" integrator="discrete"/>
  {plugin_block(flex="liver", stiffness="5", extra=[("entry", "port"), ("damping", "0.01")])}
  <worldbody>
    <site name="port" pos="-0.0145 0.027 0.15"/>
    <flexcomp name="liver" type="mesh" file="{LIVER}" scale="0.01 0.01 0.01" dim="2" radius="{FLEX_RADIUS}"
              mass="1">
      <edge equality="false"/>
      <elasticity young="3e4" poisson="0.3" thickness="0.005" damping="0.002" elastic2d="stretch"/>
      <contact selfcollide="none" contype="0" conaffinity="0"/>
      <pin id="{pins}"/>
    </flexcomp>
    <body name="tool" mocap="true" pos="-0.0145 0.027 0.15">
      <geom name="tool" type="capsule" fromto="0 0 0 0 0 -0.12" size="0.004" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <sensor><plugin instance="contact" name="contact"/></sensor>
</mujoco>"""


def laparoscope(model, data, step):
    """A scripted tool through the fixed port: it tilts and goes in, pressing the liver's top."""
    port = model.site("port").pos.copy()
    tilt = 0.25 * np.sin(step * 0.02)
    direction = np.array([np.sin(tilt), 0.3 * np.sin(tilt * 0.7), -np.cos(tilt)])
    direction /= np.linalg.norm(direction)
    insertion = 0.00015 * step  # m past the port: the tip reaches the liver's top after a few steps
    # The capsule runs from the body's origin 12 cm along its -z: turn -z onto `direction`.
    quat = np.zeros(4)
    mujoco.mju_quatZ2Vec(quat, -direction)
    data.mocap_pos[0] = port + insertion * direction
    data.mocap_quat[0] = quat


class Liver(unittest.TestCase):
    def run_liver(self, steps, data=None, model=None):
        model = model or mujoco.MjModel.from_xml_string(liver_scene())
        data = data or mujoco.MjData(model)
        for i in range(steps):
            laparoscope(model, data, i)
            mujoco.mj_step(model, data)
            self.assertEqual(data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number, 0, f"unstable at step {i}")
            yield model, data, i

    def test_the_liver_loads_in_the_obj_order(self):
        model = mujoco.MjModel.from_xml_string(liver_scene())
        with open(LIVER) as obj:
            faces = [[int(p.split("/")[0]) - 1 for p in line.split()[1:4]] for line in obj if line.startswith("f ")]
        np.testing.assert_array_equal(model.flex_elem.reshape(-1, 3), np.array(faces))

    def test_hits_equal_the_c_api_on_the_same_positions_every_step(self):
        import trocar
        import trocar_mujoco

        ctx = trocar.Context(backend=trocar.BACKEND_CPU)
        results = ctx.results()
        mesh = None
        previous_tip = None
        touching = 0
        for model, data, i in self.run_liver(200):
            g = model.geom("tool").id
            port = data.site("port").xpos
            tip = port_tip(model, data, port)
            positions = data.flexvert_xpos.astype(np.float32)
            if mesh is None:
                mesh = ctx.mesh_create(positions, model.flex_elem.astype(np.uint32))
            else:
                ctx.mesh_update_positions(mesh, positions)
            radius = model.geom_size[g][0] + model.flex_radius[0]
            expected = c_api_hits(ctx, results, mesh, port, previous_tip, tip, radius)
            self.assertEqual(trocar_mujoco.hits(data), expected, f"step {i}")
            self.assertEqual(data.sensordata[0], len(expected))
            # The deepest penetration: each hit's plane penetration capped by its overlap, radius - distance.
            deepest = max([min(h.penetration, radius - h.distance) for h in results.hits()] + [0])
            self.assertAlmostEqual(data.sensordata[1], max(deepest, 0), delta=1e-6, msg=f"step {i}")
            self.assertLessEqual(data.sensordata[1], radius + 1e-6)
            touching += bool(expected)
            previous_tip = tip
        print(f"  liver: the plugin's hits equal the C API's in 200 of 200 steps ({touching} in contact)")
        self.assertGreater(touching, 50)

    def test_mdata_on_threads_give_identical_results(self):
        model = mujoco.MjModel.from_xml_string(liver_scene())

        def run(out):
            trace = []
            for _, data, _ in self.run_liver(120, model=model):
                trace.append(np.concatenate([data.qpos, data.sensordata]))
            out.append(np.array(trace))

        serial = []
        run(serial)
        outputs = [[] for _ in range(5)]
        threads = [threading.Thread(target=run, args=(out,)) for out in outputs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertGreater(serial[0][:, -3].max(), 0, "the tool should touch the liver")
        for out in outputs:
            np.testing.assert_array_equal(out[0], serial[0])

    def test_copy_reset_and_repeated_compute(self):
        import trocar_mujoco

        model = mujoco.MjModel.from_xml_string(liver_scene())
        data = mujoco.MjData(model)
        for _ in self.run_liver(100, data=data, model=model):
            pass
        # compute depends only on the state: forward again changes nothing, and a copy steps as the original.
        # (Compared after one forward: the discrete integrator's mj_step leaves its own terms in qfrc_passive.)
        mujoco.mj_forward(model, data)
        before = (data.qacc.copy(), data.qfrc_passive.copy(), data.sensordata.copy())
        mujoco.mj_forward(model, data)
        mujoco.mj_forward(model, data)
        np.testing.assert_array_equal(data.qacc, before[0])
        np.testing.assert_array_equal(data.qfrc_passive, before[1])
        np.testing.assert_array_equal(data.sensordata, before[2])
        copy = mujoco.MjData(model)
        mujoco.mj_copyData(copy, model, data)
        self.assertEqual(trocar_mujoco.hits(copy), trocar_mujoco.hits(data))
        for i in range(100, 140):
            for d in (data, copy):
                laparoscope(model, d, i)
                mujoco.mj_step(model, d)
        np.testing.assert_array_equal(copy.qpos, data.qpos)
        np.testing.assert_array_equal(copy.sensordata, data.sensordata)
        del copy
        # A reset forgets the step's start: the data answers as a fresh one.
        mujoco.mj_resetData(model, data)
        mujoco.mj_forward(model, data)
        fresh = mujoco.MjData(model)
        mujoco.mj_forward(model, fresh)
        np.testing.assert_array_equal(data.plugin_state, fresh.plugin_state)
        np.testing.assert_array_equal(data.sensordata, fresh.sensordata)
        self.assertEqual(trocar_mujoco.hits(data), trocar_mujoco.hits(fresh))

    def test_deleting_mjdata_frees_its_context(self):
        model = mujoco.MjModel.from_xml_string(liver_scene())

        def resident_kib():
            with open("/proc/self/status") as status:
                return int(next(line for line in status if line.startswith("VmRSS:")).split()[1])

        def cycle(n):
            for i in range(n):
                data = mujoco.MjData(model)
                laparoscope(model, data, 150)
                mujoco.mj_step(model, data)
                copy = mujoco.MjData(model)
                mujoco.mj_copyData(copy, model, data)
                del data, copy

        cycle(20)
        before = resident_kib()
        cycle(200)
        grown = resident_kib() - before
        # Each mjData's trocar context holds the liver (about 100 KiB): 400 leaked would be 40 MiB.
        self.assertLess(grown, 8 * 1024, f"resident memory grew by {grown} KiB over 400 mjData")

    def test_rk4_steps_deterministically(self):
        # RK4 integrates the membrane explicitly, which this timestep cannot hold: the test is about compute.
        xml = liver_scene().replace('integrator="discrete"', 'integrator="RK4"').replace('elastic2d="stretch"', '')
        model = mujoco.MjModel.from_xml_string(xml)
        runs = []
        for _ in range(2):
            trace = [np.concatenate([d.qpos, d.sensordata]) for _, d, _ in self.run_liver(60, model=model)]
            runs.append(np.array(trace))
        np.testing.assert_array_equal(runs[0], runs[1])
        self.assertTrue(np.isfinite(runs[0]).all())


class Demo(unittest.TestCase):
    """examples/press_liver.py: the scene stays stable, the organ pushes back, and the picture shows the contact."""

    def test_the_demo_presses_the_liver_and_renders_the_contact(self):
        import importlib.util

        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "press_liver.py")
        spec = importlib.util.spec_from_file_location("press_liver", path)
        demo = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(demo)
        model, data = demo.simulate(LIVER)  # raises if MuJoCo reports the simulation unstable
        hits, deepest, force = data.sensordata
        radius = model.geom_size[model.geom("tool").id][0] + model.flex_radius[0]
        print(f"  demo: {int(hits)} triangles touched, deepest {deepest * 1000:.2f} mm, force {force:.2f} N")
        self.assertGreater(hits, 10)
        self.assertGreater(deepest, 0)
        self.assertLess(deepest, radius, "the tool should press the liver, not pass through it")
        self.assertGreater(force, 0.1)
        self.assertTrue(np.isfinite(data.qpos).all())
        png = os.path.abspath("press_liver.png")
        demo.render(model, data, png)
        from PIL import Image

        pixels = np.asarray(Image.open(png).convert("RGB")).astype(int)
        # Green seen through the translucent tool: no other part of the scene is greener than it is red or blue.
        green = (pixels[..., 1] > pixels[..., 0] + 20) & (pixels[..., 1] > pixels[..., 2] + 15)
        self.assertGreater(green.sum(), 200, "the contact triangles should show in the picture")


if __name__ == "__main__":
    unittest.main(verbosity=2)
