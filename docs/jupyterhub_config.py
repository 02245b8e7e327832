"""JupyterHub configuration that serves the aiplan planner to a team (docs/deploy.md, recipe 2).

Each person logs in and gets their own Jupyter server whose start page is the planner (Voilà, with
aiplan's offline template). Set the three paths at the top for your machine; the rest follows.
Tested with JupyterHub 5/6, configurable-http-proxy and the SimpleLocalProcessSpawner (see
docs/deploy.md for what was tested and how); for real users use your site's authenticator and
spawner (LDAP/OAuth, SystemdSpawner, DockerSpawner, KubeSpawner) in place of the two test ones.
"""

import os
import subprocess

#: the Python of the single-user environment: aiplan[notebooks] and jupyterhub installed in it
USER_PYTHON = os.environ.get("AIPLAN_USER_PYTHON", "/opt/aiplan/bin/python")
#: where the hub keeps its database, cookie secret and (for the test spawner) the users' homes
STATE = os.environ.get("AIPLAN_HUB_STATE", "/srv/aiplan-hub")
#: configurable-http-proxy (npm install configurable-http-proxy)
PROXY = os.environ.get("AIPLAN_HUB_PROXY", "configurable-http-proxy")

# the planner notebook's folder (the plans sit beside it) and aiplan's Voilà template, from that environment
NOTEBOOKS, TEMPLATES = subprocess.check_output(
    [USER_PYTHON, "-c", "from pathlib import Path; import aiplan.cli as c; "
     "print(c.planner_notebook().parent); print(Path(c.__file__).parent / 'templates' / 'jupyter')"],
    text=True).split()

c = get_config()  # noqa: F821  (JupyterHub provides it)
c.JupyterHub.bind_url = os.environ.get("AIPLAN_HUB_URL", "http://0.0.0.0:8000")
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.db_url = f"sqlite:///{STATE}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = f"{STATE}/jupyterhub_cookie_secret"
c.ConfigurableHTTPProxy.command = [PROXY]
c.ConfigurableHTTPProxy.pid_file = f"{STATE}/proxy.pid"

# every user's server: the planner is the start page, rendered by Voilà with aiplan's offline template
c.Spawner.cmd = [os.path.join(os.path.dirname(USER_PYTHON), "jupyterhub-singleuser")]
c.Spawner.notebook_dir = NOTEBOOKS
c.Spawner.default_url = "/voila/render/planner.ipynb"
c.Spawner.environment = {"JUPYTER_PATH": TEMPLATES}
c.Spawner.args = ["--VoilaConfiguration.template=aiplan"]
c.Spawner.http_timeout = 120

# test authenticator and spawner (replace for real users): any name, the shared password below
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = os.environ.get("AIPLAN_HUB_PASSWORD", "change-me")
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = f"{STATE}/home/{{username}}"
if os.geteuid() == 0:  # the test spawner runs every server as the hub's own user
    c.Spawner.args.append("--allow-root")
