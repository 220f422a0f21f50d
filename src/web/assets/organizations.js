/**
 * @module The script of the organization pages (served as /assets/organizations.js, after app.js;
 * plain JavaScript, no build step): the Organizations section of /account, the page of one
 * organization and the invitation page. It fills the lists from /api/orgs and sends the forms that
 * name their endpoint in `data-org-api` (with `data-method`, else POST). The server decides every
 * right; the page only leaves out what a role cannot do, and shows the server's refusal otherwise.
 * Everything it shows is set as text.
 */
'use strict';

(function () {
  var page = document.body.getAttribute('data-page');
  var devMode = document.body.getAttribute('data-dev-mode') === 'true';
  var messageBox = document.getElementById('message');

  // --- Messages: the page's catalog texts, read once by app.js (which runs first) ---
  var messages = window.gatehouseMessages;
  var lang = messages.lang;
  var MESSAGES = messages.texts;
  var msg = messages.msg;
  var serverText = messages.serverText;

  // The invitation link carries its token in the address; the Accept form holds it now.
  if (page === 'accept-invitation' && document.getElementById('accept-form') && /[?&]token=/.test(window.location.search)) {
    window.history.replaceState(null, '', window.location.pathname);
  }

  var ROLE_NAMES = {
    owner: msg('script.org.role.owner'),
    admin: msg('script.org.role.admin'),
    member: msg('script.org.role.member'),
  };
  /** A role in words: the built-in ones translated, an operator's own as named. */
  function roleName(role) {
    return Object.prototype.hasOwnProperty.call(ROLE_NAMES, role) ? ROLE_NAMES[role] : role;
  }

  var FIELD_NAMES = {
    name: msg('script.field.name'),
    slug: msg('script.field.slug'),
    role: msg('script.field.role'),
    email: msg('script.field.email'),
    currentPassword: msg('script.field.currentPassword'),
    token: msg('script.field.token'),
  };

  function showMessage(kind, text) {
    if (!messageBox) return;
    messageBox.classList.remove('message--error', 'message--success');
    messageBox.classList.add(kind === 'error' ? 'message--error' : 'message--success');
    messageBox.textContent = '';
    window.setTimeout(function () {
      messageBox.textContent = text;
      messageBox.focus();
    }, 30);
  }

  function call(method, url, data) {
    var init = { method: method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (data !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(data);
    }
    return fetch(url, init).then(function (response) {
      return response
        .json()
        .catch(function () {
          return null;
        })
        .then(function (body) {
          return { response: response, body: body, code: body && typeof body.error === 'string' ? body.error : '' };
        });
    });
  }

  /** Where to come back after signing in again: this page (an invitation page: the address its form keeps). */
  function signInAgain() {
    var accept = document.getElementById('accept-form');
    var back = (accept && accept.getAttribute('data-return-to')) || window.location.pathname;
    window.location.assign('/login?return_to=' + encodeURIComponent(back));
  }

  /** Words for a failed call; null when the page has already moved on (a lost session). */
  function describeFailure(result) {
    var code = result.code;
    var body = result.body;
    if (code === 'not_authenticated') {
      signInAgain();
      return null;
    }
    if (code === 'invalid_credentials') return msg('script.account.error.wrongPassword');
    if (code === 'reauthentication_required') {
      return document.querySelector('input[name="currentPassword"]') ? msg('script.account.error.passwordNeeded') : msg('script.account.error.signInAgain');
    }
    if (code === 'account_locked') return msg('script.account.error.locked');
    if (code === 'rate_limited') return msg('script.account.error.rateLimited');
    var translatedValidation = lang !== 'en' && MESSAGES['error.validation_error'];
    if (code === 'validation_error' && !translatedValidation && body && Array.isArray(body.issues) && body.issues.length > 0) {
      return body.issues
        .map(function (issue) {
          return (FIELD_NAMES[String(issue.path).split('.')[0]] || msg('script.field.other')) + ' ' + issue.message + '.';
        })
        .join(' ');
    }
    if (result.response.status >= 500) return msg('script.error.server');
    return (body && serverText(body.message, code)) || msg('script.error.generic');
  }

  function fail(result) {
    var text = describeFailure(result);
    if (text !== null) showMessage('error', text);
  }

  function networkFailure() {
    showMessage('error', msg('script.error.network'));
  }

  function formatTime(iso) {
    var date = new Date(iso);
    return isNaN(date.getTime()) ? iso : new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
  }

  function button(label, className, onClick) {
    var element = document.createElement('button');
    element.type = 'button';
    element.className = className;
    element.textContent = label;
    element.addEventListener('click', function () {
      element.disabled = true;
      Promise.resolve(onClick()).finally(function () {
        element.disabled = false;
      });
    });
    return element;
  }

  /** A list item: its first line strong (or `heading`, an element), the others muted, then `controls`. */
  function item(heading, lines, controls) {
    var li = document.createElement('li');
    var strong = document.createElement('strong');
    if (typeof heading === 'string') strong.textContent = heading;
    else strong.appendChild(heading);
    li.appendChild(strong);
    lines.forEach(function (line) {
      var span = document.createElement('span');
      span.textContent = line;
      li.appendChild(span);
    });
    (controls || []).forEach(function (control) {
      li.appendChild(control);
    });
    return li;
  }

  function fill(list, items, emptyText) {
    list.textContent = '';
    if (items.length === 0) list.appendChild(item(emptyText, []));
    items.forEach(function (each) {
      list.appendChild(each);
    });
  }

  // --- /account: the person's organizations ---
  var orgSection = document.getElementById('organizations');
  var orgList = document.getElementById('org-list');
  var ownUserId = orgSection ? orgSection.getAttribute('data-user-id') : null;

  function leave(organizationId, userId) {
    return call('DELETE', '/api/orgs/' + encodeURIComponent(organizationId) + '/members/' + encodeURIComponent(userId));
  }

  function loadOrganizations() {
    if (!orgList) return Promise.resolve();
    return call('GET', '/api/orgs').then(function (result) {
      if (!result.response.ok) return fail(result);
      fill(
        orgList,
        result.body.organizations.map(function (organization) {
          var link = document.createElement('a');
          link.href = '/organizations/' + encodeURIComponent(organization.id);
          link.textContent = organization.name;
          return item(
            link,
            [msg('script.org.yourRole', { role: roleName(organization.role) })],
            [
              button(msg('script.org.leave'), 'secondary', function () {
                return leave(organization.id, ownUserId).then(function (left) {
                  if (!left.response.ok) return fail(left);
                  showMessage('success', msg('script.org.left', { name: organization.name }));
                  return loadOrganizations();
                }, networkFailure);
              }),
            ],
          );
        }),
        msg('script.org.none'),
      );
    }, networkFailure);
  }

  // --- /organizations/:id ---
  var orgBox = document.getElementById('organization');
  var organizationId = orgBox ? orgBox.getAttribute('data-organization-id') : '';
  var myId = orgBox ? orgBox.getAttribute('data-user-id') : '';
  var myRole = orgBox ? orgBox.getAttribute('data-role') : '';
  var roles = orgBox ? (orgBox.getAttribute('data-roles') || '').split(' ') : [];
  var memberList = document.getElementById('member-list');
  var invitationList = document.getElementById('invitation-list');
  var api = '/api/orgs/' + encodeURIComponent(organizationId || '');

  function isManager(role) {
    return role === 'owner' || role === 'admin';
  }
  /** What the server allows (src/organizations/rights.ts): admins manage everyone but owners; owners manage all. */
  function mayManage(targetRole) {
    return isManager(myRole) && (targetRole !== 'owner' || myRole === 'owner');
  }

  function roleControls(member, who) {
    var id = 'role-' + member.userId;
    var label = document.createElement('label');
    label.htmlFor = id;
    label.className = 'visually-hidden';
    label.textContent = msg('script.org.roleOf', { who: who });
    var select = document.createElement('select');
    select.id = id;
    roles
      .filter(function (role) {
        return role !== 'owner' || myRole === 'owner';
      })
      .forEach(function (role) {
        var option = document.createElement('option');
        option.value = role;
        option.textContent = roleName(role);
        option.selected = role === member.role;
        select.appendChild(option);
      });
    var save = button(msg('script.org.changeRole'), 'secondary', function () {
      var role = select.value;
      return call('PATCH', api + '/members/' + encodeURIComponent(member.userId), { role: role }).then(function (result) {
        if (!result.response.ok) return fail(result);
        showMessage('success', msg('script.org.roleChanged', { who: who, role: roleName(role) }));
        if (member.userId === myId && role !== myRole) return window.location.reload();
        return loadMembers();
      }, networkFailure);
    });
    save.setAttribute('data-member', member.userId);
    return [label, select, save];
  }

  function memberItem(member) {
    var self = member.userId === myId;
    var who = member.email || msg('script.org.noEmail');
    var controls = mayManage(member.role) ? roleControls(member, who) : [];
    if (self) {
      controls.push(
        button(msg('script.org.leave'), 'secondary', function () {
          return leave(organizationId, myId).then(function (left) {
            if (!left.response.ok) return fail(left);
            window.location.assign('/account#organizations');
          }, networkFailure);
        }),
      );
    } else if (mayManage(member.role)) {
      controls.push(
        button(msg('script.org.remove'), 'secondary', function () {
          return call('DELETE', api + '/members/' + encodeURIComponent(member.userId)).then(function (removed) {
            if (!removed.response.ok) return fail(removed);
            showMessage('success', msg('script.org.removed', { who: who }));
            return loadMembers();
          }, networkFailure);
        }),
      );
    }
    var li = item(
      self ? msg('script.org.you', { who: who }) : who,
      [msg('script.org.memberLine', { role: roleName(member.role), when: formatTime(member.joinedAt) })],
      controls,
    );
    li.setAttribute('data-user-id', member.userId);
    if (self) li.classList.add('item--current');
    return li;
  }

  function loadMembers() {
    if (!memberList) return Promise.resolve();
    return call('GET', api + '/members').then(function (result) {
      if (!result.response.ok) return fail(result);
      fill(memberList, result.body.members.map(memberItem), msg('script.org.noMembers'));
    }, networkFailure);
  }

  function loadInvitations() {
    if (!invitationList) return Promise.resolve();
    return call('GET', api + '/invitations').then(function (result) {
      if (!result.response.ok) return fail(result);
      fill(
        invitationList,
        result.body.invitations.map(function (invitation) {
          var controls = mayManage(invitation.role)
            ? [
                button(msg('script.org.revoke'), 'secondary', function () {
                  return call('DELETE', api + '/invitations/' + encodeURIComponent(invitation.id)).then(function (revoked) {
                    if (!revoked.response.ok) return fail(revoked);
                    showMessage('success', msg('script.org.revoked', { email: invitation.email }));
                    return loadInvitations();
                  }, networkFailure);
                }),
              ]
            : [];
          return item(
            invitation.email,
            [msg('script.org.invitationLine', { role: roleName(invitation.role), when: formatTime(invitation.expiresAt) })],
            controls,
          );
        }),
        msg('script.org.noInvitations'),
      );
    }, networkFailure);
  }

  /** Development mode: the invitation's link, on this origin, as the email would carry it. */
  function showDevLink(url) {
    var box = document.getElementById('dev-link');
    var anchor = document.getElementById('dev-link-anchor');
    if (!devMode || !box || !anchor || typeof url !== 'string') return;
    var parsed = new URL(url, window.location.origin);
    anchor.href = parsed.pathname + parsed.search;
    anchor.textContent = msg('script.dev.invitationLink');
    box.hidden = false;
  }

  // --- Forms ---
  var onSuccess = {
    'org-create-form': function (form, body) {
      form.reset();
      showMessage('success', msg('script.org.created', { name: body.organization.name }));
      return loadOrganizations();
    },
    'invite-form': function (form, body) {
      form.reset();
      showMessage('success', msg('script.org.invited', { email: body.invitation.email }));
      showDevLink(body.url);
      return loadInvitations();
    },
    'rename-form': function (form, body) {
      var organization = body.organization;
      document.querySelector('main h1').textContent = organization.name;
      document.getElementById('org-slug').textContent = organization.slug;
      showMessage('success', msg('script.org.saved'));
    },
    'org-delete-form': function () {
      window.location.assign('/account#organizations');
    },
    'accept-form': function (form, body) {
      window.location.assign('/organizations/' + encodeURIComponent(body.organization.id));
    },
    'invitation-switch-form': function (form) {
      window.location.assign(form.getAttribute('data-next') || '/login');
    },
  };

  function setBusy(form, busy) {
    var submit = form.querySelector('button[type="submit"]');
    if (submit) {
      if (busy) {
        submit.setAttribute('data-idle-text', submit.textContent);
        submit.textContent = submit.getAttribute('data-busy-text') || submit.textContent;
      } else {
        submit.textContent = submit.getAttribute('data-idle-text') || submit.textContent;
      }
      submit.disabled = busy;
    }
    if (busy) form.setAttribute('aria-busy', 'true');
    else form.removeAttribute('aria-busy');
  }

  document.querySelectorAll('form[data-org-api]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (form.getAttribute('aria-busy') === 'true') return;
      var data = {};
      new FormData(form).forEach(function (value, name) {
        data[name] = String(value);
      });
      setBusy(form, true);
      call(form.getAttribute('data-method') || 'POST', form.getAttribute('data-org-api'), data)
        .then(function (result) {
          if (result.response.ok) return onSuccess[form.id](form, result.body);
          fail(result);
        }, networkFailure)
        .finally(function () {
          setBusy(form, false);
        });
    });
  });

  loadOrganizations();
  loadMembers();
  loadInvitations();
})();
