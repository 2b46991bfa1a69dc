//! Multicast groups: creating one by name and looking up its members.

use super::*;

impl Inner {
    /// Creates a multicast group (or returns it if it exists with the same members).
    pub(crate) fn create_group(&self, name: &str, members: &[NodeId]) -> Result<GroupId> {
        validate::group_name(name)?;
        let members = &validate::group_members(members, &self.members())?;
        let _g = self.plane()?;
        let c = self.local.ctl();
        for (i, g) in c.groups.iter().enumerate() {
            if g.state.load(Ordering::Acquire) == 1 && load_name(&g.name) == name {
                if load_set(&g.members) != *members {
                    return Err(Error::Invalid {
                        what: "group",
                        why: format!("`{name}` exists with other members"),
                    });
                }
                return Ok(GroupId(i as u16));
            }
        }
        let Some(i) = c
            .groups
            .iter()
            .position(|g| g.state.load(Ordering::Acquire) == 0)
        else {
            return Err(Error::TableFull("group"));
        };
        let g = &c.groups[i];
        store_name(&g.name, name);
        store_set(&g.members, members);
        g.state.store(1, Ordering::Release);
        Ok(GroupId(i as u16))
    }

    /// Looks a group up by name.
    pub(crate) fn group(&self, name: &str) -> Result<GroupId> {
        let _g = self.plane()?;
        self.local
            .ctl()
            .groups
            .iter()
            .position(|g| g.state.load(Ordering::Acquire) == 1 && load_name(&g.name) == name)
            .map(|i| GroupId(i as u16))
            .ok_or_else(|| Error::UnknownGroup(name.to_string()))
    }

    /// A group's member set.
    pub(crate) fn group_members(&self, g: GroupId) -> Result<NodeSet> {
        validate::group_id(g)?;
        let e = self
            .local
            .ctl()
            .groups
            .get(g.index())
            .filter(|e| e.state.load(Ordering::Acquire) == 1)
            .ok_or_else(|| validate::unknown_group(g))?;
        Ok(load_set(&e.members))
    }

    // ---- barrier -------------------------------------------------------------------
}
