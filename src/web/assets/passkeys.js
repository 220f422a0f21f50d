/**
 * @module Passkeys on /login and /account (served as /assets/passkeys.js, after webauthn.js, the
 * browser build of @simplewebauthn/browser; plain JavaScript, no build step).
 *
 * /login: the "Sign in with a passkey" button, and the browser's autofill (conditional UI): the
 * email field is `autocomplete="username webauthn"`, and a conditional request waits in the
 * background where the browser supports it, so a passkey shows among the saved sign-ins.
 * /account: the Passkeys section: list, add (the current password when the account has one),
 * rename, remove. Everything it shows is set as text.
 */
'use strict';

(function () {
  var page = document.body.getAttribute('data-page');
  var messageBox = document.getElementById('message');
  var lib = window.SimpleWebAuthnBrowser;
  var supported = !!(lib && lib.browserSupportsWebAuthn());

  function showMessage(kind, text) {
    if (!messageBox) return;
    messageBox.classList.remove('message--error', 'message--success');
    messageBox.classList.add(kind === 'error' ? 'message--error' : 'message--success');
    messageBox.textContent = '';
    window.setTimeout(function () {
      messageBox.textContent = text;
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

  /** Words for a refused call. */
  function describeFailure(result) {
    var code = result.code;
    if (code === 'passkey_invalid') return 'That passkey was not accepted here. Sign in another way, or try another passkey.';
    if (code === 'passkey_challenge_invalid') return 'That took too long or was already used. Please try again.';
    if (code === 'rate_limited') return 'Too many attempts. Try again in a few minutes.';
    if (code === 'invalid_credentials') return 'The current password is not correct.';
    if (code === 'reauthentication_required') {
      return document.getElementById('passkey-current')
        ? 'Enter your current password to add a passkey.'
        : 'For your safety, sign out and sign in again first: your sign-in is more than 10 minutes old.';
    }
    if (code === 'account_locked') return 'Too many wrong passwords: this is locked for a while. Try again later.';
    if (code === 'last_sign_in_method') return 'This passkey is the only way to sign in to your account. Set a password or add another passkey first.';
    if (code === 'validation_error') {
      var issues = (result.body && result.body.issues) || [];
      var aboutName = issues.some(function (issue) {
        return String(issue.path).split('.')[0] === 'name';
      });
      return aboutName
        ? 'The name must be 1 to 64 characters, without control characters.'
        : 'Your browser sent a passkey answer we could not read. Please try again.';
    }
    if (result.response.status >= 500) return 'Something went wrong on our side. Please try again in a moment.';
    return (result.body && result.body.message) || 'That did not work. Please try again.';
  }

  /** Words for the browser's own refusal; null when the person simply cancelled. */
  function describeBrowserError(error) {
    var name = error && error.name;
    if (name === 'AbortError') return null;
    if (name === 'NotAllowedError') return 'The passkey request was cancelled or timed out.';
    if (name === 'InvalidStateError') return 'This device already has a passkey for your account.';
    if (name === 'SecurityError') return 'Passkeys do not work at this address (they need https or localhost).';
    return 'Your browser could not use a passkey here.';
  }

  function setBusy(button, busy) {
    if (!button) return;
    if (busy) {
      button.setAttribute('data-idle-text', button.textContent);
      button.textContent = button.getAttribute('data-busy-text') || button.textContent;
    } else {
      button.textContent = button.getAttribute('data-idle-text') || button.textContent;
    }
    button.disabled = busy;
  }

  // --- /login ---
  function setUpLogin() {
    var box = document.getElementById('passkey-login');
    var button = document.getElementById('passkey-button');
    if (!supported || !box || !button) return;
    box.hidden = false;
    var returnTo = button.getAttribute('data-return-to') || '/dashboard';

    /** Options, the browser's ceremony, the verification; `autofill`: the conditional request behind the email field. */
    function signIn(autofill) {
      return call('POST', '/api/auth/passkeys/login/options').then(function (options) {
        if (!options.response.ok) {
          // The background request stays quiet; only a sign-in the person asked for says why.
          if (!autofill) showMessage('error', describeFailure(options));
          return;
        }
        return lib.startAuthentication({ optionsJSON: options.body, useBrowserAutofill: autofill }).then(
          function (credential) {
            // From here on the person chose a passkey (from the button or the autofill list): say what happened.
            return call('POST', '/api/auth/passkeys/login/verify', { response: credential }).then(function (result) {
              // A passkey without user verification is one factor: a 2FA account then owes its code.
              if (result.response.ok && result.body && result.body.mfaRequired) {
                return window.location.assign('/login?mfa=required&return_to=' + encodeURIComponent(returnTo));
              }
              if (result.response.ok) return window.location.assign(returnTo);
              showMessage('error', describeFailure(result));
            });
          },
          function (error) {
            var text = describeBrowserError(error);
            if (text !== null && !autofill) showMessage('error', text);
          },
        );
      });
    }

    button.addEventListener('click', function () {
      if (button.disabled) return;
      setBusy(button, true);
      signIn(false)
        .catch(function () {
          showMessage('error', 'We could not reach the server. Check your connection and try again.');
        })
        .finally(function () {
          setBusy(button, false);
        });
    });

    lib.browserSupportsWebAuthnAutofill().then(function (autofill) {
      if (autofill) signIn(true).catch(function () {});
    });
  }

  // --- /account ---
  function setUpAccount() {
    var list = document.getElementById('passkey-list');
    var form = document.getElementById('passkey-add-form');
    if (!list || !form) return;

    function formatTime(iso) {
      var date = new Date(iso);
      return isNaN(date.getTime()) ? iso : date.toLocaleString();
    }

    function button(label, onClick) {
      var each = document.createElement('button');
      each.type = 'button';
      each.className = 'secondary';
      each.textContent = label;
      each.addEventListener('click', function () {
        each.disabled = true;
        Promise.resolve(onClick()).finally(function () {
          each.disabled = false;
        });
      });
      return each;
    }

    /** Renaming and removing re-authenticate: the password field beside the list, when the account has a password. */
    function reauthentication() {
      var field = document.getElementById('passkey-manage-current');
      return field && field.value !== '' ? { currentPassword: field.value } : {};
    }

    /** As describeFailure, naming the field beside the list when the password is what is missing. */
    function describeManageFailure(result) {
      if (result.code === 'reauthentication_required' && document.getElementById('passkey-manage-current')) {
        return 'Enter your current password to rename or remove a passkey.';
      }
      return describeFailure(result);
    }

    function renameForm(passkey, li) {
      var edit = document.createElement('form');
      edit.className = 'rename-form';
      edit.noValidate = true;
      var id = 'passkey-rename-' + passkey.id;
      var label = document.createElement('label');
      label.htmlFor = id;
      label.textContent = 'New name';
      var input = document.createElement('input');
      input.id = id;
      input.name = 'name';
      input.type = 'text';
      input.maxLength = 64;
      input.autocomplete = 'off';
      input.value = passkey.name;
      var save = document.createElement('button');
      save.type = 'submit';
      save.className = 'secondary';
      save.textContent = 'Save';
      edit.appendChild(label);
      edit.appendChild(input);
      edit.appendChild(save);
      edit.addEventListener('submit', function (event) {
        event.preventDefault();
        save.disabled = true;
        call('PATCH', '/api/auth/passkeys/' + encodeURIComponent(passkey.id), Object.assign({ name: input.value }, reauthentication()))
          .then(function (result) {
            if (!result.response.ok) return showMessage('error', describeManageFailure(result));
            showMessage('success', 'Renamed to ' + result.body.passkey.name + '.');
            return load();
          }, networkFailure)
          .finally(function () {
            save.disabled = false;
          });
      });
      li.appendChild(edit);
      input.focus();
    }

    function networkFailure() {
      showMessage('error', 'We could not reach the server. Check your connection and try again.');
    }

    function load() {
      return call('GET', '/api/auth/passkeys').then(function (result) {
        if (!result.response.ok) {
          if (result.code !== 'not_authenticated') showMessage('error', describeFailure(result));
          return;
        }
        list.textContent = '';
        if (result.body.passkeys.length === 0) {
          var none = document.createElement('li');
          none.textContent = 'No passkey yet.';
          list.appendChild(none);
        }
        result.body.passkeys.forEach(function (passkey) {
          var li = document.createElement('li');
          li.setAttribute('data-passkey-id', passkey.id);
          var title = document.createElement('strong');
          title.textContent = passkey.name;
          var detail = document.createElement('span');
          detail.textContent =
            'Added ' + formatTime(passkey.createdAt) + (passkey.lastUsedAt ? ', last used ' + formatTime(passkey.lastUsedAt) : ', not used yet');
          li.appendChild(title);
          li.appendChild(detail);
          li.appendChild(
            button('Rename', function () {
              if (!li.querySelector('form')) renameForm(passkey, li);
            }),
          );
          li.appendChild(
            button('Remove', function () {
              return call('DELETE', '/api/auth/passkeys/' + encodeURIComponent(passkey.id), reauthentication()).then(function (deleted) {
                if (!deleted.response.ok) return showMessage('error', describeManageFailure(deleted));
                showMessage('success', 'Removed. "' + passkey.name + '" no longer signs in to this account.');
                return load();
              }, networkFailure);
            }),
          );
          list.appendChild(li);
        });
      }, networkFailure);
    }

    if (supported) {
      form.hidden = false;
    } else {
      var unsupported = document.getElementById('passkey-unsupported');
      if (unsupported) unsupported.hidden = false;
    }

    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (form.getAttribute('aria-busy') === 'true') return;
      var submit = form.querySelector('button[type="submit"]');
      var password = form.querySelector('input[name="currentPassword"]');
      var nameInput = form.querySelector('input[name="name"]');
      var name = nameInput.value.trim();
      form.setAttribute('aria-busy', 'true');
      setBusy(submit, true);
      // An empty password field is no password: the server then says one is needed.
      call('POST', form.getAttribute('data-passkey-api'), password && password.value !== '' ? { currentPassword: password.value } : {})
        .then(function (options) {
          if (!options.response.ok) return showMessage('error', describeFailure(options));
          return lib.startRegistration({ optionsJSON: options.body }).then(
            function (credential) {
              return call('POST', '/api/auth/passkeys/register/verify', name === '' ? { response: credential } : { response: credential, name: name }).then(
                function (result) {
                  if (!result.response.ok) return showMessage('error', describeFailure(result));
                  form.reset();
                  showMessage('success', 'Passkey "' + result.body.passkey.name + '" added. You can sign in with it now.');
                  return load();
                },
              );
            },
            function (error) {
              var text = describeBrowserError(error);
              if (text !== null) showMessage('error', text);
            },
          );
        }, networkFailure)
        .finally(function () {
          form.removeAttribute('aria-busy');
          setBusy(submit, false);
        });
    });

    load();
  }

  if (page === 'login') setUpLogin();
  if (page === 'account') setUpAccount();
})();
