"""A laparoscopic tool pressing the liver in MuJoCo, through trocar.contact; renders the last frame to a PNG with
the triangles the tool touches drawn in green (the plugin's visualize callback) through the translucent tool.

    pip install ./integrations/mujoco pillow
    MUJOCO_GL=osmesa python integrations/mujoco/examples/press_liver.py data/meshes/liver-smooth.obj out.png

MUJOCO_GL=osmesa renders without a display (Mesa's OSMesa); egl or glfw work where there is a GPU or a window.
"""

import sys

import numpy as np

import mujoco  # registers trocar.contact (the trocar_mujoco package's entry point)

SCENE = """<mujoco model="liver">
  <option timestep="0.002" gravity="0 0 0" integrator="discrete"/>
  <extension>
    <plugin plugin="trocar.contact">
      <instance name="contact">
        <config key="flex" value="liver"/>
        <config key="geom" value="tool"/>
        <config key="entry" value="port"/>
        <config key="stiffness" value="100"/>
        <config key="damping" value="0.02"/>
      </instance>
    </plugin>
  </extension>
  <visual><global offwidth="960" offheight="640"/><quality shadowsize="4096"/></visual>
  <worldbody>
    <light pos="0.05 -0.1 0.3" dir="-0.2 0.4 -1" diffuse="0.8 0.8 0.8"/>
    <geom name="table" type="plane" size="0.2 0.2 0.01" pos="0 0.027 -0.0175" rgba="0.35 0.4 0.45 1"
          contype="0" conaffinity="0"/>
    <site name="port" pos="-0.02 0.02 0.16" size="0.004" rgba="0.2 0.8 0.3 1"/>
    <body name="organ" pos="{centre}">
      <flexcomp name="liver" type="mesh" file="{obj}" pos="{offset}" scale="0.01 0.01 0.01" dim="2" dof="radial"
                radius="0.001" mass="1" rgba="0.62 0.22 0.18 1">
        <edge equality="false"/>
        <elasticity young="3e4" poisson="0.3" thickness="0.005" damping="0.002" elastic2d="stretch"/>
        <contact selfcollide="none" contype="0" conaffinity="0"/>
      </flexcomp>
    </body>
    <body name="tool" mocap="true" pos="-0.02 0.02 0.16">
      <geom name="tool" type="capsule" fromto="0 0 0 0 0 -0.125" size="0.004" rgba="0.75 0.75 0.8 0.35"
            contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <sensor><plugin instance="contact" name="contact"/></sensor>
</mujoco>
"""


def scene(obj):
    """The MJCF. MuJoCo 4 integrates flex elasticity implicitly only with integrator="discrete"; the plugin's
    penalty is explicit, so its stiffness per hit stays well under 4 m / dt^2 for a vertex of mass m (here
    0.45 g: 450 N/m). The liver is a shell whose vertices each slide along the ray from the organ's centre (MuJoCo's
    radial dofs): with its membrane elasticity this holds the organ's shape where a free shell, having no
    volume, would give way. Gravity is off, the organ's centre is fixed."""
    with open(obj) as f:
        v = 0.01 * np.array([[float(x) for x in line.split()[1:4]] for line in f if line.startswith("v ")])
    centre = 0.5 * (v.min(axis=0) + v.max(axis=0))
    return SCENE.format(obj=obj, centre=" ".join(map(str, centre)), offset=" ".join(map(str, -centre)))


def place_tool(model, data, seconds):
    """The tool through the port: aimed at the liver's top, it goes in 1.2 cm over a second, then holds."""
    insert_tool(model, data, 0.012 * min(seconds, 1.0))


def insert_tool(model, data, insertion):
    """The mocap tool through the port, aimed at the liver's top, `insertion` m further in than at rest."""
    port = model.site("port").pos
    target = np.array([-0.021, 0.017, 0.0])
    direction = (target - port) / np.linalg.norm(target - port)
    quat = np.zeros(4)
    mujoco.mju_quatZ2Vec(quat, -direction)
    data.mocap_pos[0] = port + insertion * direction
    data.mocap_quat[0] = quat


def simulate(obj, seconds=1.5):
    """Steps the scene for `seconds`; returns the model and data. Stops with an error if MuJoCo reports the
    simulation unstable (it would reset the state and go on)."""
    model = mujoco.MjModel.from_xml_string(scene(obj))
    data = mujoco.MjData(model)
    while data.time < seconds:
        place_tool(model, data, data.time)
        mujoco.mj_step(model, data)
        if data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number:
            raise RuntimeError(f"the simulation went unstable at t = {data.time:.3f} s")
    return model, data


def render(model, data, png):
    """The scene seen from beside the tool, which is drawn translucent so the contact triangles show."""
    from PIL import Image

    tool = model.geom("tool").id
    camera = mujoco.MjvCamera()
    half = model.geom_size[tool][1] * data.geom_xmat[tool].reshape(3, 3)[:, 2]
    ends = [data.geom_xpos[tool] - half, data.geom_xpos[tool] + half]
    port = data.site("port").xpos
    camera.lookat[:] = max(ends, key=lambda end: np.linalg.norm(end - port))  # the tip
    camera.distance, camera.azimuth, camera.elevation = 0.09, 150, -30
    with mujoco.Renderer(model, 480, 720) as renderer:
        renderer.update_scene(data, camera)
        Image.fromarray(renderer.render()).save(png)


def main(obj, png):
    model, data = simulate(obj)
    hits, deepest, force = data.sensordata
    print(f"after {data.time:.2f} s: {int(hits)} triangles touched, deepest penetration {deepest * 1000:.1f} mm, "
          f"force {force:.2f} N")
    render(model, data, png)
    print(f"wrote {png}")
    return hits


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} LIVER.obj OUT.png")
    sys.exit(0 if main(sys.argv[1], sys.argv[2]) > 0 else "the tool touched nothing")
