/**
 * @module The script of /account and /confirm-email-change (served as /assets/account.js, after
 * app.js; plain JavaScript, no build step). It fills the session and linked sign-in lists from the
 * API, and sends the forms that name their endpoint in `data-account-api`. It tells a wrong
 * current password (401 invalid_credentials: stay and say so) from a lost session (401
 * not_authenticated: sign in again, then come back). Everything it shows is set as text.
 */
'use strict';

(function () {
  var page = document.body.getAttribute('data-page');
  var devMode = document.body.getAttribute('data-dev-mode') === 'true';
  var messageBox = document.getElementById('message');

  // The confirmation link carries its token in the address; the form holds it now.
  if (page === 'confirm-email-change' && /[?&]token=/.test(window.location.search)) {
    window.history.replaceState(null, '', window.location.pathname);
  }

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

  function signInAgain() {
    window.location.assign('/login?return_to=' + encodeURIComponent('/account'));
  }

  var FIELD_NAMES = {
    newPassword: 'The new password',
    newEmail: 'The new email address',
    currentPassword: 'The current password',
    token: 'The link',
    code: 'The code',
  };

  /** Words for a failed call; null when the page has already moved on (a lost session). */
  function describeFailure(result) {
    var code = result.code;
    var body = result.body;
    if (code === 'not_authenticated') {
      signInAgain();
      return null;
    }
    if (code === 'invalid_credentials') return 'The current password is not correct.';
    if (code === 'reauthentication_required') {
      return page === 'account' && document.querySelector('input[name="currentPassword"]')
        ? 'Enter your current password to do this.'
        : 'For your safety, sign out and sign in again first: your sign-in is more than 10 minutes old.';
    }
    if (code === 'account_locked') return 'Too many wrong passwords: this is locked for a while. Try again later.';
    if (code === 'rate_limited') return 'Too many attempts. Try again later.';
    if (code === 'email_exists') return 'Another account uses this email address.';
    if (code === 'last_sign_in_method') return 'This is the only way to sign in to your account. Set a password or link another sign-in first.';
    if (code === 'invalid_code') return 'That code is not right. Enter the 6-digit code your authenticator app shows now.';
    if (code === 'invalid_token') return 'This link is invalid, expired or already used. Ask for a new one from your account page.';
    if (code === 'validation_error' && body && Array.isArray(body.issues) && body.issues.length > 0) {
      return body.issues
        .map(function (issue) {
          return (FIELD_NAMES[String(issue.path).split('.')[0]] || 'This form') + ' ' + issue.message + '.';
        })
        .join(' ');
    }
    if (result.response.status >= 500) return 'Something went wrong on our side. Please try again in a moment.';
    return (body && body.message) || 'That did not work. Please try again.';
  }

  function fail(result) {
    var text = describeFailure(result);
    if (text !== null) showMessage('error', text);
  }

  function networkFailure() {
    showMessage('error', 'We could not reach the server. Check your connection and try again.');
  }

  function formatTime(iso) {
    var date = new Date(iso);
    return isNaN(date.getTime()) ? iso : date.toLocaleString();
  }

  function item(lines, button) {
    var li = document.createElement('li');
    lines.forEach(function (line, index) {
      var p = document.createElement(index === 0 ? 'strong' : 'span');
      p.textContent = line;
      li.appendChild(p);
    });
    if (button) li.appendChild(button);
    return li;
  }

  function actionButton(label, onClick) {
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'secondary';
    button.textContent = label;
    button.addEventListener('click', function () {
      button.disabled = true;
      onClick().finally(function () {
        button.disabled = false;
      });
    });
    return button;
  }

  function fill(list, items, emptyText) {
    list.textContent = '';
    if (items.length === 0) list.appendChild(item([emptyText]));
    items.forEach(function (each) {
      list.appendChild(each);
    });
  }

  // --- Sessions ---
  var sessionList = document.getElementById('session-list');
  function loadSessions() {
    if (!sessionList) return Promise.resolve();
    return call('GET', '/api/auth/sessions').then(function (result) {
      if (!result.response.ok) return fail(result);
      fill(
        sessionList,
        result.body.sessions.map(function (session) {
          var lines = [
            (session.current ? 'This browser — ' : '') + (session.userAgent || 'An unknown browser'),
            'From ' + (session.ip || 'an unknown address') + ', signed in ' + formatTime(session.createdAt),
            'Last seen ' + formatTime(session.lastSeenAt),
          ];
          var li = item(
            lines,
            actionButton(session.current ? 'Sign out' : 'Sign it out', function () {
              return call('DELETE', '/api/auth/sessions/' + encodeURIComponent(session.id)).then(function (deleted) {
                if (!deleted.response.ok) return fail(deleted);
                if (session.current) return window.location.assign('/login?signed_out=1');
                showMessage('success', 'That session is signed out.');
                return loadSessions();
              }, networkFailure);
            }),
          );
          if (session.current) li.classList.add('item--current');
          return li;
        }),
        'No sessions.',
      );
    }, networkFailure);
  }

  var revokeOthers = document.getElementById('revoke-others');
  if (revokeOthers) {
    revokeOthers.addEventListener('click', function () {
      call('POST', '/api/auth/sessions/revoke-others').then(function (result) {
        if (!result.response.ok) return fail(result);
        var n = result.body.revoked;
        showMessage('success', n === 0 ? 'You were signed in nowhere else.' : 'Signed out ' + n + (n === 1 ? ' other session.' : ' other sessions.'));
        return loadSessions();
      }, networkFailure);
    });
  }

  // --- Linked sign-ins ---
  var linkedList = document.getElementById('linked-list');
  function loadLinked() {
    if (!linkedList) return Promise.resolve();
    return call('GET', '/api/auth/accounts').then(function (result) {
      if (!result.response.ok) return fail(result);
      fill(
        linkedList,
        result.body.accounts.map(function (account) {
          return item(
            [account.provider + ': ' + account.login, 'Linked ' + formatTime(account.linkedAt)],
            actionButton('Unlink', function () {
              var password = document.getElementById('linked-current');
              // Unlinking re-authenticates: the password beside the list, when the account has one.
              var body = password && password.value !== '' ? { currentPassword: password.value } : {};
              return call('DELETE', '/api/auth/accounts/' + encodeURIComponent(account.provider), body).then(function (deleted) {
                if (!deleted.response.ok) return fail(deleted);
                showMessage('success', 'Unlinked. You can no longer sign in with ' + account.provider + '.');
                return loadLinked();
              }, networkFailure);
            }),
          );
        }),
        'No provider is linked.',
      );
    }, networkFailure);
  }

  // --- Two-factor sign-in ---
  var mfaStatusText = document.getElementById('mfa-status');
  function showOnly(ids) {
    ['mfa-setup-form', 'mfa-enable-form', 'mfa-regenerate-form', 'mfa-disable-form'].forEach(function (id) {
      var element = document.getElementById(id);
      if (element) element.hidden = ids.indexOf(id) < 0;
    });
  }
  function showRecoveryCodes(codes) {
    var list = document.getElementById('mfa-code-list');
    list.textContent = '';
    codes.forEach(function (code) {
      var li = document.createElement('li');
      li.textContent = code;
      list.appendChild(li);
    });
    document.getElementById('mfa-codes').hidden = false;
  }
  function loadMfa() {
    if (!mfaStatusText) return Promise.resolve();
    return call('GET', '/api/auth/2fa').then(function (result) {
      if (!result.response.ok) return fail(result);
      if (result.body.totp.enabled) {
        mfaStatusText.textContent = 'On: signing in asks for a code from your authenticator app. Recovery codes left: ' + result.body.recoveryCodesLeft + '.';
        showOnly(['mfa-regenerate-form', 'mfa-disable-form']);
      } else {
        mfaStatusText.textContent = 'Off.';
        showOnly(['mfa-setup-form']);
      }
    }, networkFailure);
  }

  // --- Forms ---
  function setBusy(form, busy) {
    var button = form.querySelector('button[type="submit"]');
    if (!button) return;
    if (busy) {
      button.setAttribute('data-idle-text', button.textContent);
      button.textContent = button.getAttribute('data-busy-text') || button.textContent;
    } else {
      button.textContent = button.getAttribute('data-idle-text') || button.textContent;
    }
    button.disabled = busy;
  }

  var onSuccess = {
    'password-form': function (form) {
      form.reset();
      showMessage('success', 'Your password is changed. Every other session was signed out.');
      return loadSessions();
    },
    'email-form': function (form, body) {
      var address = form.querySelector('input[name="newEmail"]').value.trim();
      form.reset();
      showMessage('success', 'We sent a link to ' + address + '. Your address changes once you open it and press Confirm.');
      var box = document.getElementById('dev-link');
      var anchor = document.getElementById('dev-link-anchor');
      if (devMode && box && anchor && body && typeof body.token === 'string') {
        anchor.href = '/confirm-email-change?token=' + encodeURIComponent(body.token);
        anchor.textContent = 'Open the confirmation link';
        box.hidden = false;
      }
    },
    'delete-form': function () {
      document.querySelectorAll('main section, main nav').forEach(function (each) {
        each.hidden = true;
      });
      showMessage('success', 'Your account is deleted. Goodbye.');
    },
    'mfa-setup-form': function (form, body) {
      form.reset();
      // The SVG is made by the server; as an image it can run nothing, and data: images are allowed.
      document.getElementById('mfa-qr').src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(body.qrSvg);
      document.getElementById('mfa-secret').textContent = body.secret;
      showOnly(['mfa-enable-form']);
      document.getElementById('mfa-code').focus();
    },
    'mfa-enable-form': function (form, body) {
      form.reset();
      document.getElementById('mfa-secret').textContent = '';
      showRecoveryCodes(body.recoveryCodes);
      showMessage('success', 'Two-factor sign-in is on.');
      return loadMfa();
    },
    'mfa-regenerate-form': function (form, body) {
      form.reset();
      showRecoveryCodes(body.recoveryCodes);
      showMessage('success', 'New recovery codes are ready; the old ones no longer work.');
      return loadMfa();
    },
    'mfa-disable-form': function (form) {
      form.reset();
      document.getElementById('mfa-codes').hidden = true;
      showMessage('success', 'Two-factor sign-in is off.');
      return loadMfa();
    },
    'confirm-email-change-form': function (form) {
      form.hidden = true;
      showMessage('success', 'Your email address is changed and verified.');
      document.getElementById('continue').hidden = false;
    },
  };

  document.querySelectorAll('form[data-account-api]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (form.getAttribute('aria-busy') === 'true') return;
      var word = form.getAttribute('data-confirm-word');
      var confirmInput = form.querySelector('input[name="confirm"]');
      if (word && confirmInput && confirmInput.value.trim() !== word) {
        confirmInput.setAttribute('aria-invalid', 'true');
        confirmInput.focus();
        showMessage('error', 'Type ' + word + ' to confirm.');
        return;
      }
      var data = {};
      new FormData(form).forEach(function (value, name) {
        var input = form.querySelector('[name="' + name + '"]');
        if (input && input.hasAttribute('data-not-sent')) return;
        data[name] = String(value);
      });
      setBusy(form, true);
      form.setAttribute('aria-busy', 'true');
      call('POST', form.getAttribute('data-account-api'), data)
        .then(function (result) {
          if (result.response.ok) return onSuccess[form.id](form, result.body);
          fail(result);
        }, networkFailure)
        .finally(function () {
          setBusy(form, false);
          form.removeAttribute('aria-busy');
        });
    });
  });

  loadSessions();
  loadLinked();
  loadMfa();
})();
