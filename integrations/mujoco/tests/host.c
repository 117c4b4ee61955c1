/* A C host, as a C/C++ simulator would be: loads the plugin library with mj_loadPluginLibrary, compiles a scene
 * naming trocar.contact (a 2-D flex sheet with pinned corners, a mocap capsule pressing down on it), steps it
 * and reads the plugin's sensor; then checks that a bad configuration fails the load with a message naming the
 * key.
 * Usage: mujoco_host PATH/libtrocar_mujoco.so */
#include <stdio.h>
#include <string.h>

#include <mujoco/mujoco.h>

static const char* scene =
    "<mujoco>"
    "  <option timestep='0.002'/>"
    "  <extension><plugin plugin='trocar.contact'><instance name='contact'>"
    "    <config key='flex' value='sheet'/><config key='geom' value='tool'/>"
    "    <config key='stiffness' value='%s'/>"
    "  </instance></plugin></extension>"
    "  <worldbody>"
    "    <flexcomp name='sheet' type='grid' count='9 9 1' spacing='0.02 0.02 0.02' radius='0.001' dim='2'"
    "              mass='0.1'>"
    "      <edge equality='true'/>"
    "      <pin id='0 8 72 80'/>"
    "    </flexcomp>"
    "    <body name='tool' mocap='true' pos='0.003 0.004 0.05'>"
    "      <geom name='tool' type='capsule' fromto='0 0 0.06 0 0 0' size='0.005' contype='0' conaffinity='0'/>"
    "    </body>"
    "  </worldbody>"
    "  <sensor><plugin instance='contact' name='contact'/></sensor>"
    "</mujoco>";

/* MuJoCo's warnings, kept as a host would show them (MuJoCo's default prints them and writes MUJOCO_LOG.TXT):
 * stepping must raise none. */
static char warnings[4096];
static void keep_warning(const char* message) {
  size_t used = strlen(warnings);
  snprintf(warnings + used, sizeof warnings - used, "%s\n", message);
}

static mjModel* load(const char* stiffness, char* error, int size) {
  char xml[4096];
  snprintf(xml, sizeof xml, scene, stiffness);
  mjSpec* spec = mj_parseXMLString(xml, NULL, error, size);
  if (!spec) return NULL;
  mjModel* m = mj_compile(spec, NULL);
  if (!m) snprintf(error, (size_t)size, "%s", mjs_getError(spec));
  mj_deleteSpec(spec);
  return m;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PATH/libtrocar_mujoco.so\n", argv[0]);
    return 2;
  }
  mju_user_warning = keep_warning;
  mj_loadPluginLibrary(argv[1]);
  char error[1024] = "";
  mjModel* m = load("200", error, sizeof error);
  if (!m) {
    fprintf(stderr, "FAIL: the scene did not load: %s\n%s", error, warnings);
    return 1;
  }
  mjData* d = mj_makeData(m);
  int touching = 0;
  double deepest = 0;
  for (int step = 0; step < 250; step++) {
    d->mocap_pos[2] = 0.05 - 0.25 * d->time; /* down at 0.25 m/s */
    mj_step(m, d);
    if (d->sensordata[0] > 0) touching++;
    if (d->sensordata[1] > deepest) deepest = d->sensordata[1];
  }
  printf("mujoco_host: MuJoCo %s, %d of 250 steps in contact, deepest penetration %.4f m\n",
         mj_versionString(), touching, deepest);
  mj_deleteData(d);
  mj_deleteModel(m);
  if (touching < 50 || deepest <= 0) {
    fprintf(stderr, "FAIL: the tool pressing through the sheet should touch it\n");
    return 1;
  }
  if (warnings[0]) {
    fprintf(stderr, "FAIL: MuJoCo warned while stepping: %s", warnings);
    return 1;
  }
  error[0] = 0;
  m = load("-1", error, sizeof error);
  /* The compiler gathers the plugin's warning into the load's error. */
  if (m || !strstr(error, "config key 'stiffness'")) {
    fprintf(stderr, "FAIL: a negative stiffness should fail the load naming the key, got: '%s'\n", error);
    return 1;
  }
  printf("mujoco_host: a negative stiffness fails the load: %s\n", error);
  return 0;
}
